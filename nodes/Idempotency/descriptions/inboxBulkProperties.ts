import type { INodeProperties } from 'n8n-workflow';

const SHOW = { show: { operation: ['requeueEvents', 'discardEvents'] } };

/** Requeue Kept Events and Discard Kept Events: which events, how many per statement, and a Dry Run. */
export const inboxBulkProperties: INodeProperties[] = [
	{
		displayName: 'Events',
		name: 'eventState',
		type: 'options',
		options: [
			{
				name: 'Dead Letters',
				value: 'dead',
				description: 'Events parked after Max Attempts',
			},
			{
				name: 'Due Events',
				value: 'due',
				description:
					'Events waiting for Take Due Events: their backoff has passed, or the execution that ran them died',
			},
			{
				name: 'Dead Letters and Due Events',
				value: 'deadOrDue',
			},
		],
		default: 'dead',
		description:
			'Which kept events to act on. An event that runs now (its lease has not ended) is never touched, nor is one whose backoff has not passed.',
		displayOptions: SHOW,
	},
	{
		displayName: 'Filters',
		name: 'eventFilters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		description: 'Only events that match every filter given; none given: every event above',
		displayOptions: SHOW,
		options: [
			{
				displayName: 'Attempts At Least',
				name: 'attemptsAtLeast',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 1,
			},
			{
				displayName: 'Attempts At Most',
				name: 'attemptsAtMost',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 8,
			},
			{
				displayName: 'Error Contains',
				name: 'errorContains',
				type: 'string',
				default: '',
				description: 'The last error contains this text, in any case (plain text, not a pattern)',
			},
			{
				displayName: 'Parked At or After',
				name: 'parkedFrom',
				type: 'dateTime',
				default: '',
				description:
					'Parked as a dead letter at or after this time (a time without a zone is UTC). A due event was never parked: it does not match.',
			},
			{
				displayName: 'Parked Before',
				name: 'parkedBefore',
				type: 'dateTime',
				default: '',
				description: 'Parked as a dead letter before this time (a time without a zone is UTC)',
			},
			{
				displayName: 'Received At or After',
				name: 'receivedFrom',
				type: 'dateTime',
				default: '',
				description:
					'The event was first received at or after this time (a time without a zone is UTC)',
			},
			{
				displayName: 'Received Before',
				name: 'receivedBefore',
				type: 'dateTime',
				default: '',
				description: 'The event was first received before this time (a time without a zone is UTC)',
			},
			{
				displayName: 'Scope',
				name: 'scope',
				type: 'string',
				default: '',
				description:
					'The Scope of the claim node that kept the events, as recorded with each event (as Take Due Events reads it)',
			},
		],
	},
	{
		displayName: 'Dry Run',
		name: 'dryRun',
		type: 'boolean',
		default: false,
		description: 'Whether to only count the events that match, changing nothing',
		displayOptions: SHOW,
	},
	{
		displayName: 'Batch Size',
		name: 'batchSize',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 100000 },
		default: 10000,
		description:
			'Events per statement; small batches keep each lock short while webhooks and Take Due Events run',
		displayOptions: SHOW,
	},
];
