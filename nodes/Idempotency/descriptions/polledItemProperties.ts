import type { INodeProperties } from 'n8n-workflow';

/** Keep Items Where, as Remove Duplicates names it: a key per value (the claim) or a watermark per scope. */
export type KeepItemsWhere = 'new' | 'higher' | 'later';

const polled = { keySource: ['polled'] };

/** The Polled Item key source: Remove Duplicates' "Remove Items Processed in Previous Executions". */
export const polledItemProperties: INodeProperties[] = [
	{
		displayName: 'Keep Items Where',
		name: 'keepItemsWhere',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Value Is New',
				value: 'new',
				description: 'Pass an item the first time its value is seen in this scope',
			},
			{
				name: 'Value Is Higher than Any Previous Value',
				value: 'higher',
				description:
					'Pass an item whose number is above every value this scope passed before (one watermark per scope)',
			},
			{
				name: 'Value Is a Date Later than Any Previous Date',
				value: 'later',
				description:
					'Pass an item whose date is later than every date this scope passed before (one watermark per scope)',
			},
		],
		default: 'new',
		// Shown always: n8n shows an expression's value under Value to Dedupe On instead of its hint.
		hint: 'As in Remove Duplicates. Value Is New: a value seen before in this scope goes to Duplicate, also a repeat within the same input. Higher, Later: one watermark per scope; a value equal to it goes to Duplicate.',
		displayOptions: { show: polled },
	},
	{
		displayName: 'Value to Dedupe On',
		name: 'dedupeValue',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. {{ $json.guid }}',
		description: "The item's own ID: an RSS item's guid or link, an API record's ID",
		hint: "Remove Duplicates' Value Is New: an item passes the first time its value is seen in this scope; every later one, also a repeat within the same input, goes to Duplicate",
		displayOptions: { show: { ...polled, keepItemsWhere: ['new'] } },
	},
	{
		displayName: 'Value to Dedupe On',
		name: 'dedupeValue',
		type: 'string',
		default: '',
		required: true,
		// eslint-disable-next-line n8n-nodes-base/node-param-placeholder-miscased-id -- the expression as typed
		placeholder: 'e.g. {{ $json.id }}',
		description: 'A number that grows with every new item: an auto-increment ID, a sequence number',
		hint: "Passes only above the scope's highest value so far; an equal value goes to Duplicate, as in Remove Duplicates. Numeric text keeps every digit.",
		displayOptions: { show: { ...polled, keepItemsWhere: ['higher'] } },
	},
	{
		displayName: 'Value to Dedupe On',
		name: 'dedupeValue',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. {{ $json.pubDate }}',
		description: 'ISO 8601 (2024-08-09T13:44:16Z) or RFC 2822 (Fri, 09 Aug 2024 13:44:16 GMT)',
		hint: "Passes only after the scope's latest date so far; an equal date goes to Duplicate, as in Remove Duplicates. A date without an offset is read in the workflow's time zone, as Remove Duplicates reads it.",
		displayOptions: { show: { ...polled, keepItemsWhere: ['later'] } },
	},
];
