import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { MappedValueError } from '../../errors';
import { idValueToString } from '../../key/deriveKey';
import { burstTables, withBurstTables } from '../../store/bursts/burstTables';
import { settleBursts, type BurstClaim } from '../../store/bursts/settleBursts';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure, failedItem } from '../failures/databaseFailure';
import { readCredentials } from '../parameters/readCredentials';
import { readTableRef } from '../parameters/readTableRef';

const BURST_ID = /^[1-9][0-9]{0,18}$/;
/** Burst IDs are bigint: a 19-digit number past this would fail the statement for every item. */
const MAX_BURST_ID = 9223372036854775807n;

/**
 * Complete (the work ran: the burst and its items go) or Release (it failed: the lease ends now, so the
 * next Flush Due Bursts runs it again) the bursts named by each item, in one statement. Each item passes
 * on with `burst.completed` or `burst.released`: false when the burst was no longer this holder's.
 */
export async function executeSettleBurst(
	this: IExecuteFunctions,
	operation: 'complete' | 'release',
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const out: INodeExecutionData[] = [];
	const claims: Array<BurstClaim & { index: number }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const burstId = idValueToString(this.getNodeParameter('burstId', index), 'the burst ID');
			if (burstId === undefined || !BURST_ID.test(burstId) || BigInt(burstId) > MAX_BURST_ID)
				throw new MappedValueError(
					`the burst ID is ${burstId === undefined ? 'empty' : `"${burstId}"`}; map burst.id from the Collect or Flush Due Bursts output`,
				);
			const claimId = idValueToString(this.getNodeParameter('claimId', index), 'the claim ID');
			if (claimId === undefined)
				throw new MappedValueError(
					'the claim ID is empty; map burst.claimId from the Collect or Flush Due Bursts output',
				);
			claims.push({ index, burstId, claimId });
		} catch (error) {
			out.push(failedItem(itemFailure(this, error, index), 'configuration', index));
		}
	}
	if (claims.length === 0) return [out];

	const credentials = await readCredentials(this);
	const tables = burstTables(readTableRef(this));
	let settled: boolean[];
	try {
		const pool = await poolFor(credentials);
		// Nothing to settle in tables no Collect created: the node's Schema / Table must be wrong.
		settled = await withBurstTables(
			pool,
			tables,
			false,
			() => settleBursts(pool, tables, operation, claims),
			'no burst was collected there: set the Schema and Table the Collect node uses',
		);
	} catch (error) {
		return [
			[
				...out,
				...databaseFailure(
					this,
					error,
					credentials,
					claims.map((claim) => claim.index),
					// After the work, its only output: the refused items beside keep their own errors.
					true,
				),
			],
		];
	}
	const field = operation === 'complete' ? 'completed' : 'released';
	claims.forEach((claim, position) => {
		const source = items[claim.index];
		const previous = (source.json.burst ?? {}) as Record<string, unknown>;
		out.push({
			json: {
				...source.json,
				burst: { ...previous, id: claim.burstId, [field]: settled[position] },
			},
			pairedItem: { item: claim.index },
		});
	});
	return [out];
}
