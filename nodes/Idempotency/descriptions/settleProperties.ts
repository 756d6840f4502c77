import type { INodeProperties } from 'n8n-workflow';

export const settleProperties: INodeProperties[] = [
	{
		displayName: 'Key',
		name: 'key',
		type: 'string',
		default: '={{ $json.idempotency.key }}',
		description:
			'The claimed key. After a business step, map it from the Idempotency Claim node (paired item), as the bundled template does.',
		displayOptions: { show: { operation: ['complete', 'release'] } },
	},
	{
		displayName: 'Claim ID',
		name: 'claimId',
		type: 'string',
		default: '={{ $json.idempotency.claimId }}',
		description:
			'The idempotency.claimId the claim node gave this execution. Release needs it: it deletes a claim only for its holder. Complete with it cannot complete a claim that was taken over.',
		displayOptions: { show: { operation: ['complete', 'release'] } },
	},
];
