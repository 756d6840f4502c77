import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { unusableSecret } from '../signature/secrets';
import type { SigningSecrets } from '../signature/verdict';

const SIGNING_SECRET_CREDENTIAL = 'idempotencyWebhookSigningApi';

/**
 * The secrets of the node's credential. One that verifies nothing (empty or only whitespace after its
 * expression is resolved) is a configuration error naming the field, as is a credential n8n cannot read.
 */
export async function readSigningSecrets(context: IExecuteFunctions): Promise<SigningSecrets> {
	let credentials: Record<string, unknown>;
	try {
		credentials = await context.getCredentials(SIGNING_SECRET_CREDENTIAL);
	} catch (error) {
		throw new NodeOperationError(
			context.getNode(),
			`The Webhook Signing Secret credential could not be read: ${(error as Error).message}`,
		);
	}
	const current = typeof credentials.secret === 'string' ? credentials.secret : '';
	const previous = typeof credentials.previousSecret === 'string' ? credentials.previousSecret : '';
	const secrets = previous === '' ? { current } : { current, previous };
	const unusable = unusableSecret(secrets);
	if (unusable)
		throw new NodeOperationError(
			context.getNode(),
			`The Webhook Signing Secret credential has no secret: ${unusable}`,
		);
	return secrets;
}
