import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { ClaimNotHeldError, MappedValueError, WriteError } from '../errors';
import { itemFailure } from '../../shared/nodeError';
import { completeWithWrite, type WriteRequest } from '../store/claims/completeWithWrite';
import { operationResult } from '../store/record/idempotencyResult';
import {
	openClaimTable,
	withCurrentTable,
	type ClaimTable,
	type TableNeeds,
} from '../store/table/claimTable';
import { CLAIM_ID_COLUMNS, RESPONSE_COLUMNS } from '../store/table/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure, failedItem } from './failures/databaseFailure';
import { unsharedRequests } from './failures/sharedByItems';
import { readBusinessWrite } from './parameters/readBusinessWrite';
import { readClaimedKey } from './parameters/readClaimedKey';
import { readCredentials } from './parameters/readCredentials';
import { readEachItem } from './parameters/readEachItem';
import { readResponse, storesResponse } from './parameters/readResponse';
import { readTableRef } from './parameters/readTableRef';

/**
 * Complete With Write: each item's business write (the user's SQL) and its claim's Complete in one
 * transaction, committed only while this execution holds the claim. One transaction per item, so one
 * item's failed write leaves the others written and completed.
 */
export async function executeCompleteWithWrite(
	this: IExecuteFunctions,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const storing = storesResponse(this);
	const { read, failed: out } = readEachItem(this, (index): WriteRequest => {
		const { key, claimId } = readClaimedKey(this, index, 'Complete With Write writes');
		const write = readBusinessWrite(this, index);
		return {
			key,
			claimId: claimId!,
			write,
			response: storing ? readResponse(this, index) : undefined,
		};
	});
	// Of two items of one event, the first's transaction would complete the claim and the second's write
	// would then be refused: the event done with part of its work lost, and its retries duplicates.
	const requests = unsharedRequests(
		this,
		read,
		(request) => request.key,
		({ key }, indexes) =>
			new MappedValueError(
				`the key "${key}" is on items ${indexes.join(', ')} of this execution: the first write would complete ` +
					'its claim and the others would be refused, so none is written; merge the items first (an Aggregate ' +
					'node) and write them in one statement, e.g. INSERT … SELECT * FROM unnest($1::text[], $2::int[])',
			),
		out,
	);
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	const needs: TableNeeds = {
		createIfMissing: false,
		columns: [...CLAIM_ID_COLUMNS, ...(storing ? RESPONSE_COLUMNS : [])],
		privileges: ['SELECT', 'UPDATE'],
	};
	let table: ClaimTable;
	try {
		table = await openClaimTable(await poolFor(credentials), readTableRef(this), needs);
	} catch (error) {
		const all = requests.map((r) => r.index);
		return [[...out, ...databaseFailure(this, error, credentials, all, true)]];
	}
	for (const [position, request] of requests.entries()) {
		try {
			const written = await withCurrentTable(table, needs, (current) =>
				completeWithWrite(current, request),
			);
			const result = operationResult(
				items[request.index].json.idempotency,
				request.key,
				'completeWithWrite',
				{
					completed: true,
					status: written.claim.state,
					// Null where the commit's answer was lost and the completed row told that it committed.
					write: { rowCount: written.rowCount, rows: written.rows },
				},
			);
			if (storing) result.response = written.claim.response;
			out.push({
				json: { ...items[request.index].json, idempotency: result as IDataObject },
				pairedItem: { item: request.index },
			});
		} catch (error) {
			if (error instanceof WriteError || error instanceof ClaimNotHeldError) {
				const kind = error instanceof WriteError ? 'write_failed' : 'not_held';
				out.push(failedItem(itemFailure(this, error, request.index), kind, request.index));
				continue;
			}
			const unsettled = requests.slice(position).map((r) => r.index);
			return [[...out, ...databaseFailure(this, error, credentials, unsettled, true)]];
		}
	}
	return [out];
}
