import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { SignatureVerdict } from '../signature/verdict';
import { messageOf } from '../../shared/nodeError';

/**
 * A Valid item carries only what the signature covers besides the unsigned request metadata n8n adds
 * (headers, query, params): `json.body` rebuilt from the verified bytes, and the verified binary property alone,
 * so no other form field or file can reach the claim or the business step.
 */
export function validItem(
	item: INodeExecutionData,
	index: number,
	verdict: SignatureVerdict,
	body: unknown,
	rawBodyProperty: string,
): INodeExecutionData {
	const valid: INodeExecutionData = {
		json: { ...item.json, body: body as IDataObject, webhookSignature: verdict },
		pairedItem: { item: index },
	};
	const verified = item.binary?.[rawBodyProperty];
	if (verified) valid.binary = { [rawBodyProperty]: verified };
	return valid;
}

/** An Invalid item keeps what it arrived with, for the workflow to log or answer, plus the verdict. */
export function invalidItem(
	item: INodeExecutionData,
	index: number,
	verdict: SignatureVerdict,
): INodeExecutionData {
	const invalid: INodeExecutionData = {
		json: { ...item.json, webhookSignature: verdict },
		pairedItem: { item: index },
	};
	if (item.binary) invalid.binary = item.binary;
	return invalid;
}

/** The verdict for an item the node could not judge because a setting (or n8n) failed. */
export function configurationVerdict(scheme: string, error: unknown): SignatureVerdict {
	return {
		valid: false,
		scheme,
		reason: 'configuration_error',
		message: messageOf(error),
	};
}
