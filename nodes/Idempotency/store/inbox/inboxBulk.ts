import type { ClaimTable } from '../table/claimTable';
import { eventTableRef } from './eventTable';
import { eventFilterSql, keptEventsSql, type EventFilter } from './inboxFilter';
import { completedSetSql, DB_NOW, processingSql } from '../record/claimConditions';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { processClock } from '../../../shared/processClock';

/**
 * Requeue and Discard for many kept events at once, picked by a filter (inboxFilter). Each batch is one
 * statement that locks its events' claim rows and event rows (claim first, as Take Due Events, Retry
 * Later, Complete and a sender's retry do) and waits for a row another statement holds instead of
 * skipping it (Requeue Dead Letter locks an event row first: a deadlock with it is rolled back and sent
 * again); once it has the lock, Postgres checks the filter again on the rows as they are then. So an
 * event Take Due Events (or a sender's retry) took over meanwhile is running, no longer due, and is left
 * alone: never requeued under its runner (it would run twice) nor discarded as it runs. Batches walk the
 * event table's keys in order, each after the last key of the one before, so an event requeued as due is
 * not picked again, and each batch reads only the events it acts on (and those the filter passes over).
 */

export interface BulkResult {
	/** Events requeued or discarded. */
	changed: number;
	batches: number;
}

/** How many kept events the filter matches now, without locking or changing any (a Dry Run). */
export async function countMatchingEvents(table: ClaimTable, filter: EventFilter): Promise<number> {
	const values: unknown[] = [];
	const sql = `SELECT count(*)::integer AS n FROM ${keptEventsSql(table)} WHERE ${eventFilterSql(table, filter, values)}`;
	const { value } = await withTransientRetry(
		table.pool,
		(client) => client.query<{ n: number }>(sql, values),
		SETTLE_RETRY,
	);
	return value.rows[0].n;
}

/**
 * Puts every matching event back in line, as Requeue Dead Letter does for one key: due at once, its
 * attempts counted afresh (the next run is attempt 1 of Max Attempts).
 */
export function requeueMatchingEvents(
	table: ClaimTable,
	filter: EventFilter,
	batchSize: number,
): Promise<BulkResult> {
	const events = eventTableRef(table.ref).qualified;
	return inKeyOrderBatches(
		table,
		filter,
		batchSize,
		`back AS (UPDATE ${events} AS v SET dead_at = NULL, attempts = 0 FROM picked WHERE v.key = picked.key RETURNING v.key), ` +
			`changed AS (UPDATE ${table.ref.qualified} AS c SET lease_until = ${DB_NOW} FROM back WHERE c.key = back.key RETURNING c.key)`,
	);
}

/**
 * Drops every matching event and marks its claim completed, as Complete would: the operator decided it
 * is not to run. A later delivery of the key is a duplicate; no Release can free it (a completed claim
 * keeps no claim ID).
 */
export function discardMatchingEvents(
	table: ClaimTable,
	filter: EventFilter,
	batchSize: number,
): Promise<BulkResult> {
	const events = eventTableRef(table.ref).qualified;
	const completed = completedSetSql(table.layout).join(', ');
	return inKeyOrderBatches(
		table,
		filter,
		batchSize,
		`dropped AS (DELETE FROM ${events} AS v USING picked WHERE v.key = picked.key RETURNING v.key), ` +
			`changed AS (UPDATE ${table.ref.qualified} AS c SET ${completed} FROM dropped WHERE c.key = dropped.key RETURNING c.key)`,
	);
}

/**
 * Sends the statement for one batch after another until a batch finds fewer than `batchSize` events;
 * after each it pauses as long as the batch took, so claims get the server at least half the time (as
 * Purge does). `change` is the CTEs that act on `picked` and end in one named `changed`.
 */
async function inKeyOrderBatches(
	table: ClaimTable,
	filter: EventFilter,
	batchSize: number,
	change: string,
): Promise<BulkResult> {
	const values: unknown[] = [];
	const matches = eventFilterSql(table, filter, values);
	const afterAt = values.push(null);
	const after = `$${afterAt}`;
	const limit = `$${values.push(batchSize)}`;
	const claims = table.ref.qualified;
	const events = eventTableRef(table.ref).qualified;
	// The batch's candidates, read without a lock: the event table's key index walked on from the last
	// batch (each claim looked up by its key, keptEventsSql) until batchSize match, so a batch reads about
	// the events it acts on. Then their rows are locked, which checks the filter again on each row as it is
	// once locked. Locks are taken in key order under "C", as Complete takes them, so a bulk run and a batch
	// of Complete cannot deadlock.
	const sql =
		`WITH candidates AS (SELECT v.key FROM ${keptEventsSql(table)} WHERE ${matches} ` +
		`AND (${after}::text IS NULL OR v.key > ${after}) ORDER BY v.key LIMIT ${limit}), ` +
		`picked AS (SELECT c.key FROM ${claims} AS c JOIN ${events} AS v ON v.key = c.key ` +
		`WHERE c.key IN (SELECT key FROM candidates) AND ${processingSql(table.layout, 'c')} AND ${matches} ` +
		`ORDER BY c.key COLLATE "C" FOR UPDATE OF c, v), ${change} ` +
		'SELECT (SELECT count(*)::integer FROM candidates) AS candidates, ' +
		'(SELECT count(*)::integer FROM changed) AS changed, (SELECT max(key) FROM candidates) AS last';
	let changed = 0;
	let batches = 0;
	for (;;) {
		const started = processClock.nowMs();
		const { value } = await withTransientRetry(
			table.pool,
			(client) =>
				client.query<{ candidates: number; changed: number; last: string | null }>(sql, values),
			SETTLE_RETRY,
		);
		const row = value.rows[0];
		batches++;
		changed += row.changed;
		if (row.candidates < batchSize || row.last === null) break;
		values[afterAt - 1] = row.last;
		await processClock.sleep(processClock.nowMs() - started);
	}
	return { changed, batches };
}
