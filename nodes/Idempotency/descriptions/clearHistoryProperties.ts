import type { INodeProperties } from 'n8n-workflow';

const SHOW = { show: { operation: ['clearHistory'] } };

/** Batch Size is Purge's own parameter, shown for both. */
export const clearHistoryProperties: INodeProperties[] = [
	{
		displayName: 'Scope',
		name: 'clearScope',
		type: 'string',
		default: '',
		required: true,
		// The expression as users type it: $workflow.id is n8n's name, not a word to capitalise.
		// eslint-disable-next-line n8n-nodes-base/node-param-placeholder-miscased-id
		placeholder: 'e.g. {{ $workflow.id }}',
		description:
			'The Scope of the claim node whose history to delete: every key that starts with it and a colon, and its watermark',
		hint: "The part of the claim's keys before :evt:. A Polled Item without a Scope keeps its history under {{ $workflow.id }}/{{ $nodeId }} of the claim node. Never empty: Clear never empties a whole table.",
		displayOptions: SHOW,
	},
];
