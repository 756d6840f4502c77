import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import type { HmacAlgorithm } from '../signature/hmac';
import { verifySignature, type SchemeSettings } from '../signature/schemes';
import type { SignedRequest } from '../signature/verdict';
import { readSigningSecrets } from './readSigningSecrets';
import { readRawBody } from '../../shared/rawBody';

/** Output indexes of the Webhook Signature node. */
export const VALID_OUTPUT = 0;
export const INVALID_OUTPUT = 1;

/** Checks each item's signature and routes it to Valid or Invalid; the verdict rides along under `webhookSignature`. */
export async function executeVerify(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	if (items.length === 0) return outputs;
	const secrets = await readSigningSecrets(this);
	// One clock for the whole execution: every item is judged against the same "now".
	const nowSeconds = Date.now() / 1000;

	for (let index = 0; index < items.length; index++) {
		const item = items[index];
		try {
			const scheme = this.getNodeParameter('scheme', index) as string;
			const request: SignedRequest = {
				rawBody: await readRawBody(this, item, index),
				headers: plainObject(item.json.headers) ?? {},
				query: plainObject(item.json.query),
			};
			const verdict = verifySignature(
				scheme,
				request,
				secrets,
				readSchemeSettings(this, index, scheme, nowSeconds),
			);
			const routed: INodeExecutionData = {
				json: { ...item.json, webhookSignature: verdict },
				pairedItem: { item: index },
			};
			if (item.binary) routed.binary = item.binary;
			outputs[verdict.valid ? VALID_OUTPUT : INVALID_OUTPUT].push(routed);
		} catch (error) {
			// A setting that verifies nothing (bad secret format, no public URL): never Valid.
			const message = `Item ${index}: ${(error as Error).message}`;
			if (!this.continueOnFail())
				throw new NodeOperationError(this.getNode(), message, { itemIndex: index });
			outputs[INVALID_OUTPUT].push({ json: { error: message }, pairedItem: { item: index } });
		}
	}
	return outputs;
}

function readSchemeSettings(
	context: IExecuteFunctions,
	index: number,
	scheme: string,
	nowSeconds: number,
): SchemeSettings {
	const settings: SchemeSettings = {
		nowSeconds,
		toleranceSeconds: context.getNodeParameter('toleranceSeconds', index, 300) as number,
	};
	if (!(settings.toleranceSeconds > 0))
		throw new Error(
			`Tolerance must be a positive number of seconds, got ${settings.toleranceSeconds}`,
		);
	if (scheme === 'twilio')
		settings.publicUrl = context.getNodeParameter('publicUrl', index, '') as string;
	if (scheme === 'genericHmac') {
		settings.generic = {
			signatureHeader: context.getNodeParameter('signatureHeader', index, 'X-Signature') as string,
			algorithm: context.getNodeParameter('algorithm', index, 'sha256') as HmacAlgorithm,
			encoding: context.getNodeParameter('encoding', index, 'hex') as 'hex' | 'base64',
			prefix: context.getNodeParameter('prefix', index, '') as string,
			timestampHeader: (context.getNodeParameter('timestampHeader', index, '') as string).trim(),
			signedContent: context.getNodeParameter('signedContent', index, '{body}') as string,
		};
	}
	return settings;
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
	return value !== null && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}
