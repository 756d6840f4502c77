import type { IExecuteFunctions } from 'n8n-workflow';

import { messageOf, nodeError } from '../../shared/nodeError';
import { unusableSecret } from '../signature/secrets';
import { SignatureConfigError, type SigningSecrets } from '../signature/verdict';

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
		// n8n's own error, told as the credential's.
		throw nodeError(context.getNode(), error, {
			message: `The Webhook Signing Secret credential could not be read: ${messageOf(error)}`,
		});
	}
	const current = typeof credentials.secret === 'string' ? credentials.secret : '';
	const previous = typeof credentials.previousSecret === 'string' ? credentials.previousSecret : '';
	const secrets = previous === '' ? { current } : { current, previous };
	const unusable = unusableSecret(secrets);
	if (unusable)
		throw new SignatureConfigError(
			`The Webhook Signing Secret credential has no secret: ${unusable}`,
		);
	return secrets;
}
