import type { IExecuteFunctions } from 'n8n-workflow';

import {
	DEFAULT_MAX_RESPONSE_KIB,
	MAX_RESPONSE_KIB_LIMIT,
	storedResponseText,
	type ResponseBodyType,
} from '../../response/storedResponse';
import { readSwitch } from './readSwitch';
import { readNumber } from './readNumber';

/** Whether Complete stores a response (read once: one execution stores for all its items or for none). */
export function storesResponse(context: IExecuteFunctions): boolean {
	return readSwitch(context, 'storeResponse', false, 'Store Response');
}

/** The item's response to store, as its JSON text; throws a message naming the field and the problem. */
export function readResponse(context: IExecuteFunctions, index: number): string {
	const bodyType = context.getNodeParameter('responseBodyType', index, 'json') as ResponseBodyType;
	const headers = context.getNodeParameter('responseHeaders.entries', index, []) as Array<{
		name?: unknown;
		value?: unknown;
	}>;
	const maxKib = readNumber(
		context.getNodeParameter('maxResponseKib', index, DEFAULT_MAX_RESPONSE_KIB),
		'Max Response Size (KiB)',
		{ min: 1, max: MAX_RESPONSE_KIB_LIMIT },
	);
	return storedResponseText(
		{
			statusCode: context.getNodeParameter('responseCode', index, 200),
			bodyType,
			body: context.getNodeParameter(
				bodyType === 'json' ? 'responseJson' : 'responseText',
				index,
				'',
			),
			headers,
		},
		maxKib * 1024,
	);
}
