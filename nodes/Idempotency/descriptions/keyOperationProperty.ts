import type { INodeProperties } from 'n8n-workflow';

/** The Idempotency Key node's operations, as the editor offers them; the router runs only these. */
export type KeyOperation =
	| 'clearHistory'
	| 'complete'
	| 'completeWithWrite'
	| 'discardEvents'
	| 'inboxSummary'
	| 'listStuck'
	| 'purge'
	| 'release'
	| 'requeue'
	| 'requeueEvents'
	| 'retryLater'
	| 'takeDue';

export const keyOperationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Clear Deduplication History',
			value: 'clearHistory',
			action: 'Clear deduplication history',
			description:
				"Delete one scope's keys and its watermark, as Remove Duplicates' Clear Deduplication History does",
		},
		{
			name: 'Complete',
			value: 'complete',
			action: 'Complete a claimed key',
			description:
				'Mark the key done after the business step succeeded; later deliveries are completed duplicates',
		},
		{
			name: 'Complete With Write',
			value: 'completeWithWrite',
			action: 'Write to postgres and complete the key',
			description:
				'Run your SQL write and Complete the key in one transaction, only while this execution holds the claim: both commit or neither does',
		},
		{
			name: 'Discard Kept Events',
			value: 'discardEvents',
			action: 'Discard kept events by filter',
			description:
				'Drop the dead letters (or due events) a filter matches and mark their keys completed: they never run, and a redelivery is a duplicate',
		},
		{
			name: 'List Stuck Claims',
			value: 'listStuck',
			action: 'List stuck claims',
			description:
				'List claims left processing with an expired lease (their execution died), optionally with a summary of the table',
		},
		{
			name: 'Purge',
			value: 'purge',
			action: 'Purge old keys',
			description: 'Delete keys older than the providers can resend, in batches',
		},
		{
			name: 'Release',
			value: 'release',
			action: 'Release a claimed key',
			description:
				"Delete the key after the business step failed, so the provider's next retry runs",
		},
		{
			name: 'Requeue Dead Letter',
			value: 'requeue',
			action: 'Requeue a dead letter',
			description:
				'Put a parked event back in line by its key: due at once, its attempts counted afresh',
		},
		{
			name: 'Requeue Kept Events',
			value: 'requeueEvents',
			action: 'Requeue kept events by filter',
			description:
				'Put every dead letter (or due event) a filter matches back in line: due at once, attempts counted afresh',
		},
		{
			name: 'Retry Later',
			value: 'retryLater',
			action: 'Retry a kept event later',
			description:
				'After the business step failed: keep the claim and its event, record the error, and make it due again after a backoff (a dead letter after Max Attempts)',
		},
		{
			name: 'Summarize Inbox',
			value: 'inboxSummary',
			action: 'Summarize the inbox',
			description:
				'Count kept events by scope and state (due, running, scheduled, dead), with the age of the oldest: cheap enough for every minute',
		},
		{
			name: 'Take Due Events',
			value: 'takeDue',
			action: 'Take due events',
			description:
				'For a scheduled workflow: take over kept events that are due (retries whose backoff passed, executions that died) and output each as the Webhook node would',
		},
	],
	default: 'complete',
};
