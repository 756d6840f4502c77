import type { INodeProperties } from 'n8n-workflow';

import { LONGEST_DURATION_SECONDS } from './durationLimit';
import { tableOptions } from './tableOptions';

/** The Idempotency Limit node's operations, as the editor offers them; the router runs only these. */
export type LimitOperation = 'takeSlot' | 'freeSlot' | 'checkRate';

/** What Take Slot does when every slot of the key is held. */
export type WhenNoSlot = 'wait' | 'leave';

/** The longest an execution waits for a slot. */
export const MAX_WAIT_LIMIT_SECONDS = 3600;
/** The most slots of one key, and the most starts of one window: each is a row or an array element. */
export const MAX_AT_ONCE_LIMIT = 1000;
export const MAX_STARTS_LIMIT = 10_000;

const TAKE_SLOT = { show: { operation: ['takeSlot'] } };
const CHECK_RATE = { show: { operation: ['checkRate'] } };

export const limitOperationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Check Rate',
			value: 'checkRate',
			action: 'Check the rate of a key',
			description:
				'Let at most Max Starts items of a key start in any window of the given length: Allowed, or Limited with when to try again',
		},
		{
			name: 'Free Slot',
			value: 'freeSlot',
			action: 'Free a slot',
			description:
				'After the work (succeeded or failed): give the slot back, so the next item of its key may take it',
		},
		{
			name: 'Take Slot',
			value: 'takeSlot',
			action: 'Take a slot of a key',
			description:
				'Let at most Max at Once items of a key run at a time: Got Slot, or No Slot with when to try again',
		},
	],
	default: 'takeSlot',
};

export const limitProperties: INodeProperties[] = [
	limitOperationProperty,
	{
		displayName: 'Limit Key',
		name: 'limitKey',
		type: 'string',
		required: true,
		default: '',
		placeholder: '={{ $json.body.customer_id }}',
		description:
			'Items with the same key share the limit: a customer, an account, an API the work calls',
		displayOptions: { show: { operation: ['takeSlot', 'checkRate'] } },
	},
	{
		displayName: 'Max at Once',
		name: 'maxAtOnce',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_AT_ONCE_LIMIT },
		default: 1,
		description: 'How many items of one key may hold a slot at the same time',
		displayOptions: TAKE_SLOT,
	},
	{
		displayName: 'Slot Lease (Seconds)',
		name: 'slotLeaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LONGEST_DURATION_SECONDS },
		default: 300,
		description:
			'How long the work may hold its slot. An execution that died without Free Slot gives its slot back when this ends.',
		hint: 'Must outlast your slowest work: a slot still in use after its lease may be taken by another item',
		displayOptions: TAKE_SLOT,
	},
	{
		displayName: 'If No Slot Is Free',
		name: 'whenNoSlot',
		type: 'options',
		options: [
			{
				name: 'Leave on No Slot',
				value: 'leave',
				description:
					'At once, with retryAfterSeconds: answer 503 with Retry-After, or keep the event',
			},
			{
				name: 'Wait',
				value: 'wait',
				description: 'Until a slot of the key is freed, up to Max Wait; then leave on No Slot',
			},
		],
		default: 'leave',
		displayOptions: TAKE_SLOT,
	},
	{
		displayName: 'Max Wait (Seconds)',
		name: 'maxWaitSeconds',
		type: 'number',
		typeOptions: { minValue: 0.01, maxValue: MAX_WAIT_LIMIT_SECONDS, numberPrecision: 2 },
		default: 10,
		description:
			'The longest the execution waits for a slot. It holds no database connection while it waits.',
		displayOptions: { show: { operation: ['takeSlot'], whenNoSlot: ['wait'] } },
	},
	{
		displayName: 'Slot ID',
		name: 'slotId',
		type: 'string',
		default: '={{ $json.idempotency.slot.slotId }}',
		description:
			'The idempotency.slot.slotId the Take Slot output carried. After the work, map it from that node (paired item). Only its holder frees a slot.',
		displayOptions: { show: { operation: ['freeSlot'] } },
	},
	{
		displayName: 'Max Starts',
		name: 'maxStarts',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_STARTS_LIMIT },
		default: 10,
		description: 'How many items of one key may start in any window of the length below',
		displayOptions: CHECK_RATE,
	},
	{
		displayName: 'Window (Seconds)',
		name: 'windowSeconds',
		type: 'number',
		typeOptions: { minValue: 0.01, maxValue: LONGEST_DURATION_SECONDS, numberPrecision: 2 },
		default: 60,
		description:
			'The length of the sliding window: no span of this length, wherever it begins, holds more than Max Starts starts of a key',
		displayOptions: CHECK_RATE,
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Create Table If Missing',
				name: 'createTable',
				type: 'boolean',
				default: true,
				description:
					'Whether Take Slot and Check Rate create the limit tables (the table name followed by _slots and _rates) when they do not exist. Free Slot never creates them.',
			},
			...tableOptions,
		],
	},
];
