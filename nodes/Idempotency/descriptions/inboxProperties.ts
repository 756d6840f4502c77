import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

import { LONGEST_DURATION_SECONDS } from './durationLimit';

const RETRY = { show: { operation: ['retryLater'] } };
const TAKE = { show: { operation: ['takeDue'] } };

/** What each inbox operation falls back to; test/descriptions checks they are the defaults shown below. */
export const INBOX_DEFAULTS = {
	maxAttempts: 8,
	baseSeconds: 30,
	factor: 2,
	capSeconds: 3600,
	jitter: 0.2,
	maxEvents: 100,
	leaseSeconds: 300,
};

/** One Max Attempts for the claim node (Keep Event), Retry Later and Take Due Events: set the same number on all three. */
export const maxAttemptsProperty = (displayOptions: IDisplayOptions): INodeProperties => ({
	displayName: 'Max Attempts',
	name: 'maxAttempts',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1000 },
	default: 8,
	description:
		"Runs an event may start, whoever starts them (the first delivery is one; a sender's retry or Take Due Events another) before it is parked as a dead letter: never taken again until Requeue Dead Letter puts it back. Use the same number on the claim node, Retry Later and Take Due Events.",
	displayOptions,
});

export const inboxProperties: INodeProperties[] = [
	{
		displayName: 'Error Message',
		name: 'errorMessage',
		type: 'string',
		default:
			'={{ $json.error?.message ?? $json.message ?? $json.error ?? "the business step failed" }}',
		description:
			"What went wrong, kept with the event as its last error (List Stuck Claims shows it for a dead letter). Map it from the business step's error output.",
		displayOptions: RETRY,
	},
	maxAttemptsProperty(RETRY),
	{
		displayName: 'Delay',
		name: 'delay',
		type: 'options',
		options: [
			{
				name: 'Backoff',
				value: 'backoff',
				description: 'Longer after each failed run, as set under Backoff',
			},
			{
				name: 'Seconds Given per Item',
				value: 'perItem',
				description:
					"Each item says when its event is due again, e.g. Check Rate's retryAfterSeconds",
			},
		],
		default: 'backoff',
		description: 'When the event is due again',
		displayOptions: RETRY,
	},
	{
		displayName: 'Delay (Seconds)',
		name: 'delaySeconds',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: LONGEST_DURATION_SECONDS },
		// eslint-disable-next-line n8n-nodes-base/node-param-default-wrong-for-number -- Check Rate's answer per item, the use it is for
		default: '={{ $json.idempotency.rate.retryAfterSeconds }}',
		description:
			"Seconds until this item's event is due again (0 to a year). An item whose value is not such a number fails, naming the item.",
		displayOptions: { show: { operation: ['retryLater'], delay: ['perItem'] } },
	},
	{
		displayName: 'Count as an Attempt',
		name: 'countAttempt',
		type: 'boolean',
		default: true,
		description:
			'Whether this run counts toward Max Attempts. Turn it off where the event was not run at all (Check Rate said Limited): the run is given back and the event is never parked for it, so waiting for a rate window never makes a dead letter.',
		displayOptions: RETRY,
	},
	{
		displayName: 'Backoff',
		name: 'backoff',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		description:
			'When the event is due again: Base × Factor^(attempt − 1) seconds, at most Cap, less up to Jitter of itself',
		displayOptions: { show: { operation: ['retryLater'], delay: ['backoff'] } },
		options: [
			{
				displayName: 'Base (Seconds)',
				name: 'baseSeconds',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: LONGEST_DURATION_SECONDS },
				default: 30,
			},
			{
				displayName: 'Factor',
				name: 'factor',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 2,
			},
			{
				displayName: 'Cap (Seconds)',
				name: 'capSeconds',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: LONGEST_DURATION_SECONDS },
				default: 3600,
			},
			{
				displayName: 'Jitter',
				name: 'jitter',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 1 },
				default: 0.2,
				description: 'The share of each delay that is random (0 to 1)',
			},
		],
	},
	{
		displayName: 'Max Events',
		name: 'maxEvents',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 10000 },
		default: 100,
		description: 'Take at most this many due events per run, the longest due first',
		displayOptions: TAKE,
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LONGEST_DURATION_SECONDS },
		default: 300,
		description:
			'How long each taken event is held by this run; if the run dies, the event is due again after it. Must outlast the whole run (Max Events × your slowest business step): every event of the run gets this one lease.',
		displayOptions: TAKE,
	},
	maxAttemptsProperty(TAKE),
	{
		displayName: 'Scope',
		name: 'scope',
		type: 'string',
		default: '',
		placeholder: 'e.g. shop',
		description:
			'Take only the events kept by a claim node with this Scope (its Options → Scope). Empty: only events kept without a Scope. Two workflows that keep events in one table stay apart by giving each its own Scope.',
		displayOptions: TAKE,
	},
];
