import type { ClaimTable } from '../table/claimTable';
import { deleteInBatches } from '../statements/deleteInBatches';
import { deleteWithEvents, eventTableRef } from '../inbox/eventTable';
import { DB_NOW } from '../record/claimConditions';
import { liveClaimSql } from '../record/liveClaims';

export interface PurgeOptions {
	olderThanDays: number;
	batchSize: number;
	/** Also delete dead letters first seen and parked before the cutoff (their events with them). */
	includeDeadLetters?: boolean;
	/** The clock the cutoff and lease expiry are measured from; the database's now() when omitted. */
	now?: Date;
}

export interface PurgeResult {
	deleted: number;
	batches: number;
	cutoff: Date;
}

/**
 * Deletes keys first seen before the cutoff, in batches (deleteInBatches). A claim still being worked
 * on (processing, lease not yet expired) is never deleted, however old its key: its holder would lose it
 * and a retry would run the work again. Nor is a claim that keeps an event still in flight, whatever its
 * lease says: due (its holder died), scheduled by Retry Later, requeued, or parked as a dead letter,
 * unless asked to delete dead letters parked before the cutoff too.
 * Rows another transaction holds are skipped, not waited for; the next purge takes them.
 */
export async function purgeKeys(table: ClaimTable, options: PurgeOptions): Promise<PurgeResult> {
	const { qualified } = table.ref;
	const clock = await table.pool.query<{ now: Date; cutoff: Date }>(
		`SELECT COALESCE($1::timestamptz, ${DB_NOW}) AS now, COALESCE($1::timestamptz, ${DB_NOW}) - make_interval(secs => $2) AS cutoff`,
		[options.now ?? null, options.olderThanDays * 86_400],
	);
	const { now, cutoff } = clock.rows[0];
	// Without lease columns every claim is final: nothing is still being worked on.
	const { leases } = table.capabilities;
	const rule = {
		layout: table.layout,
		events: table.capabilities.events ? eventTableRef(table.ref) : null,
		now: '$3',
		deadLettersBefore: { enabled: '$4::boolean', cutoff: '$1' },
	};
	const live = leases ? ` AND NOT ${liveClaimSql(rule, 't')}` : '';
	const values: unknown[] = leases ? [cutoff, options.batchSize, now] : [cutoff, options.batchSize];
	if (leases && rule.events) values.push(options.includeDeadLetters === true);
	// The oldest keys first, read from the first_seen index a batch at a time (a partitioned table merges
	// its partitions' indexes): the table itself is never scanned.
	const sql =
		`WITH doomed AS (SELECT t.key FROM ${qualified} AS t WHERE t.first_seen < $1${live} ORDER BY t.first_seen LIMIT $2 FOR UPDATE OF t SKIP LOCKED) ` +
		deleteWithEvents(table, 'doomed');
	const { deleted, batches } = await deleteInBatches(table.pool, sql, values, options.batchSize);
	return { deleted, batches, cutoff };
}
