import type { Pool } from 'pg';

import { deleteInBatches } from '../statements/deleteInBatches';
import { deleteWithEvents, eventTableRef } from '../inbox/eventTable';
import { DB_NOW } from '../record/claimConditions';
import { liveClaimSql } from '../record/liveClaims';
import { readTableFacts } from '../table/tableFacts';
import { layoutOf } from '../record/tableLayout';
import type { TableRef } from '../table/tableRef';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { UNDEFINED_TABLE } from '../table/createOnDemand';
import type { WatermarkRef } from '../watermark/watermarkTable';

export interface ClearScopeRequest {
	/** The scope itself: its watermark row is named so. */
	scope: string;
	/** What each of its keys starts with, `<scope>:`. */
	keyPrefix: string;
	batchSize: number;
}

export interface ClearScopeResult {
	deletedKeys: number;
	batches: number;
	/** Whether the scope had a watermark, now gone. */
	watermarkCleared: boolean;
}

/**
 * Deletes one scope's history: every key that starts with `<scope>:` (compared with starts_with, so
 * `_` and `%` in a scope are plain characters, not LIKE wildcards) in batches, and the scope's
 * watermark. A claim still being worked on (processing, lease running) is kept, as Purge keeps it: its
 * holder would lose it and the next poll would run the item a second time; so is a claim whose kept event
 * is still in flight (due, scheduled, requeued or a dead letter): clearing history never drops an event. A table that does not exist
 * has nothing to clear; neither table is created.
 */
export async function clearScope(
	pool: Pool,
	claimTable: TableRef,
	watermarks: WatermarkRef,
	request: ClearScopeRequest,
): Promise<ClearScopeResult> {
	const facts = await readTableFacts(pool, claimTable);
	let deleted = { deleted: 0, batches: 0 };
	if (facts.tableExists) {
		// A compact table has no status column: a set lease_until is what marks a claim still processing.
		const rule = {
			layout: layoutOf(facts.columns),
			events: facts.eventTableExists ? eventTableRef(claimTable) : null,
			now: DB_NOW,
		};
		const live = facts.columns.has('lease_until') ? ` AND NOT ${liveClaimSql(rule, 't')}` : '';
		const { qualified } = claimTable;
		const sql =
			`WITH doomed AS (SELECT t.key FROM ${qualified} AS t WHERE starts_with(t.key, $1)${live} LIMIT $2 FOR UPDATE OF t SKIP LOCKED) ` +
			deleteWithEvents(
				{
					ref: claimTable,
					capabilities: { events: facts.eventTableExists, steps: facts.stepTableExists },
				},
				'doomed',
			);
		deleted = await deleteInBatches(
			pool,
			sql,
			[request.keyPrefix, request.batchSize],
			request.batchSize,
		);
	}
	return {
		deletedKeys: deleted.deleted,
		batches: deleted.batches,
		watermarkCleared: await deleteWatermark(pool, watermarks, request.scope),
	};
}

async function deleteWatermark(pool: Pool, ref: WatermarkRef, scope: string): Promise<boolean> {
	let failure: unknown;
	try {
		const { value } = await withTransientRetry(
			pool,
			(client) => client.query(`DELETE FROM ${ref.qualified} WHERE scope = $1`, [scope]),
			SETTLE_RETRY,
		);
		return (value.rowCount ?? 0) > 0;
	} catch (error) {
		failure = error;
	}
	// undefined_table: no watermark was ever kept beside this claim table.
	if ((failure as { code?: string })?.code === UNDEFINED_TABLE) return false;
	throw failure;
}
