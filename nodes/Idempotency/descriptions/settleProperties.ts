import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_MAX_RESPONSE_KIB, MAX_RESPONSE_KIB_LIMIT } from '../response/storedResponse';

const STORING = { show: { operation: ['complete', 'completeWithWrite'], storeResponse: [true] } };

export const settleProperties: INodeProperties[] = [
	{
		displayName: 'Key',
		name: 'key',
		type: 'string',
		default: '={{ $json.idempotency.key }}',
		description:
			'The claimed key. After a business step, map it from the Idempotency Claim node (paired item), as the bundled template does.',
		displayOptions: {
			show: { operation: ['complete', 'completeWithWrite', 'release', 'retryLater', 'requeue'] },
		},
	},
	{
		displayName: 'Claim ID',
		name: 'claimId',
		type: 'string',
		default: '={{ $json.idempotency.claimId }}',
		description:
			'The idempotency.claimId the claim node gave this execution. Release and Retry Later need it: they act on a claim only for its holder. Complete with it cannot complete a claim that was taken over.',
		displayOptions: {
			show: { operation: ['complete', 'completeWithWrite', 'release', 'retryLater'] },
		},
	},
	{
		displayName: 'Store Response',
		name: 'storeResponse',
		type: 'boolean',
		default: false,
		description:
			'Whether to store the answer with the key, so every later repeat leaves the claim node on Duplicate carrying it (idempotency.response) for a Respond to Webhook node to replay',
		hint: 'Answer this request from the output too ({{ $json.idempotency.response }}): it holds the response the key keeps, so the first caller and every repeat get the same bytes',
		displayOptions: { show: { operation: ['complete', 'completeWithWrite'] } },
	},
	{
		displayName: 'Response Code',
		name: 'responseCode',
		type: 'number',
		typeOptions: { minValue: 100, maxValue: 599 },
		default: 200,
		displayOptions: STORING,
	},
	{
		displayName: 'Response Body Type',
		name: 'responseBodyType',
		type: 'options',
		options: [
			{ name: 'JSON', value: 'json', description: 'Stored as its JSON text' },
			{ name: 'Text', value: 'text', description: 'Stored as written' },
		],
		default: 'json',
		displayOptions: STORING,
	},
	{
		displayName: 'Response Body',
		name: 'responseJson',
		type: 'json',
		default: '{\n  "status": "processed"\n}',
		displayOptions: { show: { ...STORING.show, responseBodyType: ['json'] } },
	},
	{
		displayName: 'Response Body',
		name: 'responseText',
		type: 'string',
		default: '',
		displayOptions: { show: { ...STORING.show, responseBodyType: ['text'] } },
	},
	{
		displayName: 'Response Headers',
		name: 'responseHeaders',
		placeholder: 'Add Response Header',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		default: {},
		description:
			"Headers to store and replay, such as Location. Content-Type is stored too: the body type's unless named here.",
		options: [
			{
				name: 'entries',
				displayName: 'Entries',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
		displayOptions: STORING,
	},
	{
		displayName: 'Max Response Size (KiB)',
		name: 'maxResponseKib',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_RESPONSE_KIB_LIMIT },
		default: DEFAULT_MAX_RESPONSE_KIB,
		description:
			'A larger response fails its item with its size, and the claim stays unfinished: store only what the caller needs',
		displayOptions: STORING,
	},
];
