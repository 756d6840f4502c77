import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData, type INodeProperties } from 'n8n-workflow';

import { idValueToString } from '../key/deriveKey';
import { openClaimTable } from '../store/claimTable';
import { completeKeys, releaseKeys, type SettleRequest } from '../store/settleKeys';
import { databaseFailure } from './databaseFailure';
import { readCredentials } from './readCredentials';
import { readTableRef } from './readTableSettings';

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
		default: '',
		description:
			'Optional. When set, only the claim with this ID is completed or released, so an execution whose lease was taken over cannot undo the new holder. Use idempotency.claimId from the claim node.',
		displayOptions: { show: { operation: ['complete', 'release'] } },
	},
];

type SettleOperation = 'complete' | 'release';

/** Complete (mark done) or Release (delete, so the provider's next retry runs) the claims named by each item. */
export async function executeSettle(this: IExecuteFunctions, operation: SettleOperation): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const out: INodeExecutionData[] = [];
	const requests: Array<SettleRequest & { index: number }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const key = idValueToString(this.getNodeParameter('key', index), 'the key');
			if (key === undefined) throw new Error('the key is empty; map it from the claim node, e.g. {{ $json.idempotency.key }}');
			const token = idValueToString(this.getNodeParameter('claimId', index, ''), 'the claim ID') ?? null;
			requests.push({ index, key, claimToken: token });
		} catch (error) {
			const message = `Item ${index}: ${(error as Error).message}`;
			if (!this.continueOnFail()) throw new NodeOperationError(this.getNode(), message, { itemIndex: index });
			out.push({ json: { error: message }, pairedItem: { item: index } });
		}
	}
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	let settled: Set<string>;
	try {
		const table = await openClaimTable(credentials, ref, false);
		const settle = operation === 'complete' ? completeKeys : releaseKeys;
		settled = await settle(table.pool, ref, table.capabilities, requests);
	} catch (error) {
		return [[...out, ...databaseFailure(this, error, credentials, requests.map((r) => r.index))]];
	}
	for (const request of requests) {
		out.push({
			json: {
				...items[request.index].json,
				idempotency: {
					...((items[request.index].json.idempotency as object | undefined) ?? {}),
					key: request.key,
					operation,
					// False when the key was not found, or is held by another claim token.
					[operation === 'complete' ? 'completed' : 'released']: settled.has(request.key),
				},
			},
			pairedItem: { item: request.index },
		});
	}
	return [out];
}
