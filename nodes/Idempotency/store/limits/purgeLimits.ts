import type { Pool } from 'pg';

import { deleteInBatches } from '../statements/deleteInBatches';
import type { LimitTables } from './limitTables';

export interface LimitPurgeResult {
	/** Slot rows deleted: free since before the cutoff (freed, or their lease ended). */
	slots: number;
	/** Rate rows deleted: every start they kept had left its window before the cutoff. */
	rates: number;
}

/**
 * Deletes the limit rows of keys idle since before the cutoff, in batches, rows another statement holds
 * skipped (the next purge takes them). Deleting an idle slot row is always safe: a take that finds fewer
 * than N rows makes them again, free; a held slot (its lease still running) is never idle. A rate row goes
 * only once its newest start left the window it was counted in (counts_until): it no longer limits anything.
 * Tables that do not exist (the limits never used) delete nothing.
 */
const purgeSlotsSql = (t: LimitTables) => `
DELETE FROM ${t.slots} s USING (
	SELECT key, slot FROM ${t.slots} WHERE COALESCE(lease_until, '-infinity') < $1
	LIMIT $2 FOR UPDATE SKIP LOCKED) idle
WHERE s.key = idle.key AND s.slot = idle.slot`;

const purgeRatesSql = (t: LimitTables) => `
DELETE FROM ${t.rates} r USING (
	SELECT key FROM ${t.rates} WHERE counts_until < $1 LIMIT $2 FOR UPDATE SKIP LOCKED) idle
WHERE r.key = idle.key`;

export async function purgeLimits(
	pool: Pool,
	tables: LimitTables,
	{ cutoff, batchSize }: { cutoff: Date; batchSize: number },
): Promise<LimitPurgeResult> {
	const { rows } = await pool.query<{ slots: boolean; rates: boolean }>(
		'SELECT to_regclass($1) IS NOT NULL AS slots, to_regclass($2) IS NOT NULL AS rates',
		[tables.slots, tables.rates],
	);
	const values = [cutoff, batchSize];
	const purge = async (exists: boolean, sql: string) =>
		exists ? (await deleteInBatches(pool, sql, values, batchSize)).deleted : 0;
	return {
		slots: await purge(rows[0].slots, purgeSlotsSql(tables)),
		rates: await purge(rows[0].rates, purgeRatesSql(tables)),
	};
}
