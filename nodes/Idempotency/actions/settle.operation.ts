import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import {
	completeClaims,
	releaseClaims,
	type SettledClaim,
	type SettleRequest,
} from '../store/claims/settleKeys';
import { CLAIM_ID_COLUMNS, RESPONSE_COLUMNS } from '../store/table/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readClaimedKey } from './parameters/readClaimedKey';
import { readCredentials } from './parameters/readCredentials';
import { readEachItem } from './parameters/readEachItem';
import { readResponse, storesResponse } from './parameters/readResponse';
import { readTableRef } from './parameters/readTableRef';
import { settledResult } from '../store/record/idempotencyResult';

export type SettleOperation = 'complete' | 'release';

/** Complete (mark done) or Release (delete, so the provider's next retry runs) the claims named by each item. */
export async function executeSettle(
	this: IExecuteFunctions,
	operation: SettleOperation,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const storing = operation === 'complete' && storesResponse(this);
	const { read: requests, failed: out } = readEachItem(this, (index): SettleRequest => {
		const { key, claimId } = readClaimedKey(
			this,
			index,
			operation === 'release' ? 'Release deletes a claim' : undefined,
		);
		const response = storing ? readResponse(this, index) : undefined;
		return { key, claimId, response };
	});
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	// A claim ID can only be checked where the table keeps one; a table without it is refused, never trusted.
	const checksClaimIds =
		operation === 'release' || requests.some((request) => request.claimId !== null);
	const needs: TableNeeds = {
		createIfMissing: false,
		columns: [...(checksClaimIds ? CLAIM_ID_COLUMNS : []), ...(storing ? RESPONSE_COLUMNS : [])],
		privileges: operation === 'complete' ? ['SELECT', 'UPDATE'] : ['SELECT', 'DELETE'],
	};
	let settled: SettledClaim[];
	try {
		const table = await openClaimTable(await poolFor(credentials), ref, needs);
		const settle = operation === 'complete' ? completeClaims : releaseClaims;
		settled = await withCurrentTable(table, needs, (current) => settle(current, requests));
	} catch (error) {
		return [
			[
				...out,
				...databaseFailure(
					this,
					error,
					credentials,
					requests.map((r) => r.index),
					true,
				),
			],
		];
	}
	requests.forEach((request, position) => {
		const { state, response } = settled[position];
		const result = settledResult(
			items[request.index].json.idempotency,
			request.key,
			operation,
			state,
		);
		// The response the key holds now, to answer with: the one just stored, or the first one stored.
		if (storing) result.response = response;
		out.push({
			json: { ...items[request.index].json, idempotency: result as IDataObject },
			pairedItem: { item: request.index },
		});
	});
	return [out];
}
