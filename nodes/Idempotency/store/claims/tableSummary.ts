import type { ClaimTable } from '../table/claimTable';
import { claimStatusSql, DB_NOW, statusSql } from '../record/claimConditions';
import type { ClaimStatus } from '../record/claimStatus';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';

export interface TableSummary {
	totalKeys: number;
	/** Keys per status; a table without lease columns counts every key as completed (claims there are final). */
	keysByStatus: Partial<Record<ClaimStatus, number>>;
	/** Keys delivered more than once whose last delivery came in the 24 hours before `now`; null without counters. */
	keysRepeatedLastDay: number | null;
	oldestKey: string | null;
	oldestFirstSeen: Date | null;
	now: Date;
}

/**
 * One picture of the table for an operator: how many keys in which state, how many were delivered again
 * in the last day, and the oldest key (how far back the purge has reached). It reads the whole table, so
 * it is meant for a scheduled report, not for every execution.
 */
export async function summarizeTable(
	table: ClaimTable,
	options: { now?: Date } = {},
): Promise<TableSummary> {
	const { qualified } = table.ref;
	const { counters, leases } = table.capabilities;
	const status = leases ? claimStatusSql(table.layout, 't') : `${statusSql('completed')}::text`;
	const repeated = counters
		? `(SELECT count(*) FROM ${qualified} WHERE deliveries > 1 AND last_seen > clock.now - interval '1 day')`
		: 'NULL::bigint';
	const sql =
		`WITH clock AS (SELECT COALESCE($1::timestamptz, ${DB_NOW}) AS now), ` +
		`statuses AS (SELECT ${status} AS status, count(*) AS n FROM ${qualified} AS t GROUP BY 1), ` +
		`oldest AS (SELECT key, first_seen FROM ${qualified} ORDER BY first_seen, key LIMIT 1) ` +
		"SELECT clock.now, (SELECT COALESCE(json_object_agg(status, n), '{}') FROM statuses) AS by_status, " +
		`${repeated} AS repeated, ` +
		'(SELECT key FROM oldest) AS oldest_key, (SELECT first_seen FROM oldest) AS oldest_first_seen FROM clock';
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{
				now: Date;
				by_status: Partial<Record<ClaimStatus, number>>;
				repeated: string | null;
				oldest_key: string | null;
				oldest_first_seen: Date | null;
			}>(sql, [options.now ?? null]),
		SETTLE_RETRY,
	);
	const row = value.rows[0];
	const keysByStatus = row.by_status;
	return {
		totalKeys: Object.values(keysByStatus).reduce((sum, n) => sum + Number(n), 0),
		keysByStatus,
		keysRepeatedLastDay: row.repeated === null ? null : Number(row.repeated),
		oldestKey: row.oldest_key,
		oldestFirstSeen: row.oldest_first_seen,
		now: row.now,
	};
}
