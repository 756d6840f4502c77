import type { INodeProperties } from 'n8n-workflow';

export const purgeProperties: INodeProperties[] = [
	{
		displayName: 'Older Than (Days)',
		name: 'olderThanDays',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 36500 },
		default: 30,
		description:
			'Delete keys first seen longer ago than this, and the Idempotency Limit rows (the _slots and _rates tables beside this one) of keys idle that long',
		hint: 'Must outlast how long your providers resend: a resend after the purge is processed again. Stripe resends up to 30 days (CLI).',
		displayOptions: { show: { operation: ['purge'] } },
	},
	{
		displayName: 'Delete Old Dead Letters',
		name: 'includeDeadLetters',
		type: 'boolean',
		default: false,
		description:
			'Whether to delete dead letters too: kept events parked after Max Attempts, first seen and parked longer ago than Older Than (Days). Off: they stay until Requeue or a person deals with them. An event that is due, scheduled or requeued is never purged.',
		displayOptions: { show: { operation: ['purge'] } },
	},
	{
		displayName: 'Batch Size',
		name: 'batchSize',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 100000 },
		default: 10000,
		description: 'Rows per DELETE statement; small batches keep each lock short on big tables',
		displayOptions: { show: { operation: ['purge', 'clearHistory'] } },
	},
];
