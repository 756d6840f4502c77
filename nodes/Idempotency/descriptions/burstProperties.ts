import type { INodeProperties } from 'n8n-workflow';

import { LONGEST_DURATION_SECONDS } from './durationLimit';
import { tableOptions } from './tableOptions';

/** The Idempotency Burst node's operations, as the editor offers them; the router runs only these. */
export type BurstOperation = 'collect' | 'complete' | 'release' | 'flush';

/** The longest a burst may stay open: its holder's execution waits that long. */
export const MAX_WAIT_LIMIT_SECONDS = 3600;
export const MAX_ITEMS_LIMIT = 10_000;

const COLLECT = { show: { operation: ['collect'] } };

export const burstOperationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Collect',
			value: 'collect',
			action: 'Collect an item into its burst',
			description:
				'Add each item to the open burst of its key, or start one; the execution that started it outputs the whole burst once it ends',
		},
		{
			name: 'Complete',
			value: 'complete',
			action: 'Complete a burst',
			description: 'After the work ran: delete the burst and its items',
		},
		{
			name: 'Flush Due Bursts',
			value: 'flush',
			action: 'Flush due bursts',
			description:
				'For a scheduled workflow: take over bursts whose execution died or failed (their lease ran out) and output each',
		},
		{
			name: 'Release',
			value: 'release',
			action: 'Release a burst',
			description:
				'After the work failed: end its lease, so the next Flush Due Bursts runs it again',
		},
	],
	default: 'collect',
};

export const burstProperties: INodeProperties[] = [
	burstOperationProperty,
	{
		displayName: 'Burst Key',
		name: 'burstKey',
		type: 'string',
		required: true,
		default: '',
		// eslint-disable-next-line n8n-nodes-base/node-param-placeholder-miscased-id -- the expression as typed
		placeholder: '={{ $json.body.message.chat.id }}',
		description:
			'Items with the same key are collected into one burst: a chat, a conversation, a record ID',
		displayOptions: COLLECT,
	},
	{
		displayName: 'Run the Work',
		name: 'edge',
		type: 'options',
		options: [
			{
				name: 'After a Quiet Period (Trailing)',
				value: 'trailing',
				description:
					'Once no item has arrived for the quiet period, once for every item of the burst',
			},
			{
				name: 'At the First Item (Leading)',
				value: 'leading',
				description:
					'At once for the first item; the items that follow within the quiet period run together when it ends',
			},
		],
		default: 'trailing',
		displayOptions: COLLECT,
	},
	{
		displayName: 'Quiet Period (Seconds)',
		name: 'quietSeconds',
		type: 'number',
		typeOptions: { minValue: 0.01, maxValue: LONGEST_DURATION_SECONDS, numberPrecision: 2 },
		default: 10,
		description: 'A burst ends when no item has joined it for this long',
		displayOptions: COLLECT,
	},
	{
		displayName: 'Max Wait (Seconds)',
		name: 'maxWaitSeconds',
		type: 'number',
		typeOptions: { minValue: 0.01, maxValue: MAX_WAIT_LIMIT_SECONDS, numberPrecision: 2 },
		default: 60,
		description:
			'A burst ends this long after its first item at the latest, however often items keep arriving. The execution that started it waits that long at most.',
		displayOptions: COLLECT,
	},
	{
		displayName: 'Max Items',
		name: 'maxItems',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_ITEMS_LIMIT },
		default: 50,
		description: 'A burst ends as soon as it holds this many items',
		displayOptions: COLLECT,
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LONGEST_DURATION_SECONDS },
		default: 300,
		description:
			'How long the work may take once a burst ended. After that, the burst is taken over by the next Flush Due Bursts or the next burst of its key: an execution that died loses nothing.',
		hint: 'Must outlast your slowest work: a burst still running after its lease is run a second time',
		displayOptions: { show: { operation: ['collect', 'flush'] } },
	},
	{
		displayName: 'Burst ID',
		name: 'burstId',
		type: 'string',
		default: '={{ $json.burst.id }}',
		// eslint-disable-next-line n8n-nodes-base/node-param-description-miscased-id -- the field's name as the item carries it
		description:
			'The burst.id the Collect or Flush Due Bursts output carried. After the work, map it from that node (paired item).',
		displayOptions: { show: { operation: ['complete', 'release'] } },
	},
	{
		displayName: 'Claim ID',
		name: 'claimId',
		type: 'string',
		default: '={{ $json.burst.claimId }}',
		description:
			'The burst.claimId given with the burst: only its holder completes or releases it (a burst taken over has a new one)',
		displayOptions: { show: { operation: ['complete', 'release'] } },
	},
	{
		displayName: 'Burst Key Prefix',
		name: 'burstKeyPrefix',
		type: 'string',
		default: '',
		placeholder: 'e.g. telegram:',
		description:
			"Take only bursts whose Burst Key starts with this. Workflows that share the burst tables stay apart by starting each one's Burst Key with its own prefix (which also keeps their Collects apart) and setting it here. Empty: every due burst in the tables.",
		displayOptions: { show: { operation: ['flush'] } },
	},
	{
		displayName: 'Max Bursts',
		name: 'maxBursts',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 1000 },
		default: 100,
		description: 'The most bursts one run takes over; the rest wait for the next run',
		displayOptions: { show: { operation: ['flush'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Answer the Webhook Once Stored',
				name: 'answerWhenStored',
				type: 'boolean',
				default: false,
				description:
					'Whether to answer the webhook (200, {"status": "received"}) as soon as this execution\'s items are safe in Postgres, before the burst ends. Needs the Webhook node\'s Respond set to Using \'Respond to Webhook\' Node.',
				displayOptions: { show: { '/operation': ['collect'] } },
			},
			{
				displayName: 'Item ID',
				name: 'itemId',
				type: 'string',
				default: '',
				placeholder: '={{ $json.body.update_id }}',
				description:
					"The item's own ID (a message or update ID): a redelivered item is collected once and leaves on Joined marked duplicate. The ID is claimed in the claim table (Schema / Table) until Purge removes it.",
				displayOptions: { show: { '/operation': ['collect'] } },
			},
			{
				displayName: 'Create Table If Missing',
				name: 'createTable',
				type: 'boolean',
				default: true,
				description:
					'Whether to create the burst tables (the table name followed by _bursts and _burst_items), and the claim table for Item ID, when they do not exist',
			},
			...tableOptions,
		],
	},
];
