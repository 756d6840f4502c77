import type { INodeProperties } from 'n8n-workflow';

const SHOW = { show: { operation: ['listStuck'] } };

export const stuckClaimsProperties: INodeProperties[] = [
	{
		displayName: 'First Seen More Than (Minutes) Ago',
		name: 'stuckAfterMinutes',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 52560000 },
		default: 60,
		description:
			'Report a claim left processing with an expired lease only once its key is this old, so a claim whose provider is still retrying it is not reported',
		displayOptions: SHOW,
	},
	{
		displayName: 'Max Keys',
		name: 'maxKeys',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 100000 },
		default: 1000,
		description: 'Report at most this many stuck claims, oldest first',
		displayOptions: SHOW,
	},
	{
		displayName: 'Include Table Summary',
		name: 'includeSummary',
		type: 'boolean',
		default: false,
		description:
			'Whether to output one more item first: keys by status, keys repeated in the last day, the oldest key. It reads the whole table.',
		displayOptions: SHOW,
	},
];
