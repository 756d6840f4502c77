import type { Pool } from 'pg';

import { DB_NOW, leaseEndedSql, leaseRunsSql, mineSql } from '../record/claimConditions';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { CLAIM_RETRY } from '../statements/transientErrors';
import type { LimitTables } from './limitTables';

/** One attempt at a slot of a key: at most `maxAtOnce` holders at a time, each for `leaseMs` at most. */
export interface SlotRequest {
	key: string;
	maxAtOnce: number;
	/** The slot ID this attempt holds the slot by: the same on every attempt of one item. */
	slotId: string;
	leaseMs: number;
}

/** A slot taken (`slot`, its lease's end) or not (then when the soonest held lease ends, in whole seconds). */
export type SlotAnswer =
	{ taken: true; slot: number; leaseUntil: Date } | { taken: false; retryAfterSeconds: number };

interface TakeRow {
	slot: number | null;
	lease_until: Date | null;
	slots: number;
	retry_after: number;
}

/**
 * Takes a free slot of the key (slots 1..N: a lease ended, or never held) in one statement. The free row
 * is locked FOR UPDATE SKIP LOCKED and rechecked on its newest version (READ COMMITTED's recheck of a row
 * changed since the snapshot), so two executions never take one row, and one taken a moment ago is not
 * free: a key never has more than N holders while their leases run. An attempt sent again after a lost
 * answer finds the slot it already holds (mine) first and takes no second one. A row locked by another
 * statement (a take or a free at that moment) is skipped: the attempt may answer no slot a moment early.
 * A slot nobody holds (never taken, or freed: no slot ID) is free whatever its lease_until says: a seed or
 * a free stamps it with its own now(), which can be later than the now() of a take whose snapshot sees it.
 * Without a slot it answers when the soonest running lease ends (at least 1 s): a slot comes back then
 * at the latest, or sooner if its holder frees it.
 */
const takeSql = (t: LimitTables) => `
WITH free AS (
	SELECT s.key, s.slot FROM ${t.slots} s
	WHERE s.key = $1 AND s.slot <= $2
		AND (s.claim_token IS NULL OR ${leaseEndedSql('s', DB_NOW)} OR ${mineSql('s', '$3')})
	ORDER BY ${mineSql('s', '$3')} DESC, s.slot
	LIMIT 1 FOR UPDATE SKIP LOCKED
), taken AS (
	UPDATE ${t.slots} s SET claim_token = $3, lease_until = ${DB_NOW} + $4::float8 * interval '1 millisecond'
	FROM free WHERE s.key = free.key AND s.slot = free.slot
	RETURNING s.slot, s.lease_until
), held AS (
	SELECT count(*)::int AS slots,
		min(s.lease_until) FILTER (WHERE s.claim_token IS NOT NULL AND ${leaseRunsSql('s', DB_NOW)}) AS soonest
	FROM ${t.slots} s WHERE s.key = $1 AND s.slot <= $2
)
SELECT taken.slot, taken.lease_until, held.slots,
	GREATEST(1, ceil(extract(epoch FROM held.soonest - ${DB_NOW})))::int AS retry_after
FROM held LEFT JOIN taken ON true`;

/** Makes the key's missing slot rows up to N, free since now; rows that exist are left as they are. */
const seedSql = (t: LimitTables) =>
	`INSERT INTO ${t.slots} (key, slot, lease_until) SELECT $1, generate_series(1, $2::int), ${DB_NOW} ON CONFLICT DO NOTHING`;

/**
 * Takes a free slot of the key, or answers when to try again. The first take of a key (or one with a
 * larger N than before) finds fewer than N rows: it makes them, then takes again.
 */
export async function takeSlot(
	pool: Pool,
	tables: LimitTables,
	request: SlotRequest,
): Promise<SlotAnswer> {
	const values = [request.key, request.maxAtOnce, request.slotId, request.leaseMs];
	let row = await take(pool, tables, values);
	if (row.slot === null && row.slots < request.maxAtOnce) {
		await queryStatementWithRetry(
			pool,
			namedStatement(seedSql(tables)),
			[request.key, request.maxAtOnce],
			CLAIM_RETRY,
		);
		row = await take(pool, tables, values);
	}
	if (row.slot === null || row.lease_until === null)
		return { taken: false, retryAfterSeconds: row.retry_after };
	return { taken: true, slot: row.slot, leaseUntil: row.lease_until };
}

async function take(pool: Pool, tables: LimitTables, values: unknown[]): Promise<TakeRow> {
	const { value } = await queryStatementWithRetry<TakeRow>(
		pool,
		namedStatement(takeSql(tables)),
		values,
		CLAIM_RETRY,
	);
	return value.rows[0];
}
