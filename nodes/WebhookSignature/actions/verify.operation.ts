import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readSignedBody } from '../../shared/body/signedBody';
import { headerValue } from '../../shared/headerValue';
import { verifySignature } from '../signature/schemes';
import { refuse, type SignedRequest } from '../signature/verdict';
import { readParameter, readSchemeSettings } from './readSchemeSettings';
import { readSigningSecrets } from './readSigningSecrets';
import { configurationVerdict, invalidItem, validItem } from './verdictItems';
import { continuingSafely } from '../../shared/continuingSafely';
import { itemFailure } from '../../shared/nodeError';
import { readRawBody } from '../../shared/rawBody';
import { processClock } from '../../shared/processClock';

/** Output indexes of the Webhook Signature node. */
const VALID_OUTPUT = 0;
const INVALID_OUTPUT = 1;

/**
 * Checks each item's signature and routes it to Valid or Invalid; the verdict rides along under
 * `webhookSignature`. Under either Continue setting n8n hands a throwing node's input to its first output,
 * Valid, so the node never throws there: a setting that verifies nothing makes every item Invalid with
 * `configuration_error`. Under Stop Workflow it is a node error, and the execution fails.
 */
export async function executeVerify(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	if (items.length === 0) return [[], []];
	return await continuingSafely(
		this,
		() => verifyItems(this, items),
		(error) => {
			const verdict = configurationVerdict(readScheme(this, 0), error);
			return [[], items.map((item, index) => invalidItem(item, index, verdict))];
		},
	);
}

async function verifyItems(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outputs: INodeExecutionData[][] = [[], []];
	const secrets = await readSigningSecrets(context);
	// One clock for the whole execution: every item is judged against the same "now".
	const nowSeconds = processClock.nowMs() / 1000;

	for (let index = 0; index < items.length; index++) {
		const item = items[index];
		const scheme = readScheme(context, index);
		try {
			const property = readParameter(
				context,
				'options.binaryPropertyName',
				index,
				'data',
				'Binary Property',
			);
			const request: SignedRequest = {
				rawBody: await readRawBody(context, item, index, property),
				headers: plainObject(item.json.headers) ?? {},
				query: plainObject(item.json.query),
			};
			const settings = readSchemeSettings(context, index, scheme, nowSeconds);
			const verdict = verifySignature(scheme, request, secrets, settings);
			if (!verdict.valid) {
				outputs[INVALID_OUTPUT].push(invalidItem(item, index, verdict));
				continue;
			}
			const body = readSignedBody(request.rawBody!, headerValue(request.headers, 'content-type'));
			outputs[body.ok ? VALID_OUTPUT : INVALID_OUTPUT].push(
				body.ok
					? validItem(item, index, verdict, body.body, property)
					: invalidItem(item, index, refuse(scheme, 'unsigned_body', body.problem)),
			);
		} catch (error) {
			// A setting that verifies nothing (bad secret format, no public URL): never Valid.
			itemFailure(context, error, index);
			outputs[INVALID_OUTPUT].push(invalidItem(item, index, configurationVerdict(scheme, error)));
		}
	}
	return outputs;
}

/** The scheme is a fixed option (no expressions), so reading it cannot fail in a real workflow. */
function readScheme(context: IExecuteFunctions, index: number): string {
	try {
		return String(context.getNodeParameter('scheme', index));
	} catch {
		return 'unknown';
	}
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
	return value !== null && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}
