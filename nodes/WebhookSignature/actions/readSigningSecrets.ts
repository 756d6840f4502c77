import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import type { SigningSecrets } from '../signature/verdict';

export const SIGNING_SECRET_CREDENTIAL = 'idempotencyWebhookSigningApi';

/** The secrets of the node's credential; an empty secret would verify nothing, so it is a node error. */
export async function readSigningSecrets(context: IExecuteFunctions): Promise<SigningSecrets> {
	const credentials = await context.getCredentials(SIGNING_SECRET_CREDENTIAL);
	const current = typeof credentials.secret === 'string' ? credentials.secret : '';
	const previous = typeof credentials.previousSecret === 'string' ? credentials.previousSecret : '';
	if (current === '') {
		throw new NodeOperationError(
			context.getNode(),
			'The Webhook Signing Secret credential has no secret',
		);
	}
	return previous === '' ? { current } : { current, previous };
}
