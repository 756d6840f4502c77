import type { INodeProperties } from 'n8n-workflow';

/** The Idempotency Key node's operations, as the editor offers them; the router runs only these. */
export type KeyOperation =
	| 'clearHistory'
	| 'complete'
	| 'listStuck'
	| 'purge'
	| 'release'
	| 'requeue'
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
			name: 'Retry Later',
			value: 'retryLater',
			action: 'Retry a kept event later',
			description:
				'After the business step failed: keep the claim and its event, record the error, and make it due again after a backoff (a dead letter after Max Attempts)',
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
