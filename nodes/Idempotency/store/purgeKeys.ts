import type { Queryable } from './queryable';
import type { TableRef } from './tableRef';
import { withTransientRetry } from './transientErrors';

export interface PurgeOptions {
	olderThanDays: number;
	batchSize: number;
	/** The clock the cutoff is measured from; the database's now() when omitted. */
	now?: Date;
}

export interface PurgeResult {
	deleted: number;
	batches: number;
	cutoff: Date;
}

/**
 * Deletes keys first seen before the cutoff, one short statement per batch, so a table with millions of
 * keys is never locked for long and claims keep flowing while it runs. Rows another transaction holds
 * are skipped, not waited for; the next purge takes them.
 */
export async function purgeKeys(db: Queryable, ref: TableRef, options: PurgeOptions): Promise<PurgeResult> {
	const cutoffResult = await db.query<{ cutoff: Date }>(
		'SELECT COALESCE($1::timestamptz, now()) - make_interval(secs => $2) AS cutoff',
		[options.now ?? null, options.olderThanDays * 86_400],
	);
	const cutoff = cutoffResult.rows[0].cutoff;
	const sql =
		`WITH doomed AS (SELECT key FROM ${ref.qualified} WHERE first_seen < $1 ORDER BY first_seen LIMIT $2 FOR UPDATE SKIP LOCKED) ` +
		`DELETE FROM ${ref.qualified} AS e USING doomed WHERE e.key = doomed.key`;
	let deleted = 0;
	let batches = 0;
	for (;;) {
		const result = await withTransientRetry(() => db.query(sql, [cutoff, options.batchSize]));
		const count = result.rowCount ?? 0;
		batches++;
		deleted += count;
		if (count < options.batchSize) break;
	}
	return { deleted, batches, cutoff };
}
