import type { ClaimTable } from '../table/claimTable';
import { eventTableRef } from '../inbox/eventTable';
import { DB_NOW, expiredSql } from '../record/claimConditions';
import type { ClaimRow } from '../record/claimRow';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';

export interface StuckClaimQuery {
	/** Only claims first seen longer ago than this count: a young claim may still be retried by its provider. */
	firstSeenMinutesAgo: number;
	/** At most this many claims, oldest first. */
	limit: number;
	/** The clock lease expiry and age are measured from; the database's now() when omitted. */
	now?: Date;
}

export interface StuckClaim {
	key: string;
	firstSeen: Date;
	lastSeen: Date | null;
	deliveries: number | null;
	leaseUntil: Date | null;
}

export interface StuckClaims {
	/** False for a table without lease columns: every claim there is final when made, so none can be stuck. */
	leasesTracked: boolean;
	claims: StuckClaim[];
	/** The clock the query used. */
	now: Date;
}

/**
 * Claims still `processing` whose lease has expired: their execution died, and only a retry from the
 * provider would take them over. Providers stop retrying (GitHub never redelivers on its own), so these
 * are events nobody will process unless a person acts. A lease of NULL counts as expired, as the claim
 * statement's takeover treats it.
 */
export async function listStuckClaims(
	table: ClaimTable,
	query: StuckClaimQuery,
): Promise<StuckClaims> {
	const now = await clockOf(table, query.now);
	if (!table.capabilities.leases) return { leasesTracked: false, claims: [], now };
	const { counters } = table.capabilities;
	// A compact row leaves last_seen and deliveries NULL until a repeat: the first delivery, and one.
	const countersRead = counters
		? 'COALESCE(last_seen, first_seen) AS last_seen, COALESCE(deliveries, 1) AS deliveries'
		: 'NULL::timestamptz AS last_seen, NULL::integer AS deliveries';
	const sql =
		`SELECT key, first_seen, ${countersRead}, lease_until FROM ${table.ref.qualified} AS t ` +
		`WHERE ${stuck(table)} ORDER BY first_seen, key LIMIT $3`;
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<
				Pick<ClaimRow, 'key' | 'first_seen' | 'last_seen' | 'deliveries' | 'lease_until'>
			>(sql, [now, query.firstSeenMinutesAgo * 60, query.limit]),
		SETTLE_RETRY,
	);
	return {
		leasesTracked: true,
		now,
		claims: value.rows.map((row) => ({
			key: row.key,
			firstSeen: row.first_seen,
			lastSeen: row.last_seen,
			deliveries: row.deliveries,
			leaseUntil: row.lease_until,
		})),
	};
}

/** How many claims are stuck, whatever the limit of the list: the same rule, counted over the whole table. */
export async function countStuckClaims(
	table: ClaimTable,
	query: Omit<StuckClaimQuery, 'limit'>,
): Promise<number> {
	if (!table.capabilities.leases) return 0;
	const now = await clockOf(table, query.now);
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{ n: number }>(
				`SELECT count(*)::integer AS n FROM ${table.ref.qualified} AS t WHERE ${stuck(table)}`,
				[now, query.firstSeenMinutesAgo * 60],
			),
		SETTLE_RETRY,
	);
	return value.rows[0].n;
}

/**
 * $1 the clock, $2 the age in seconds a key must reach before its claim counts as stuck. A claim that keeps
 * its event is not stuck: Take Due Events runs it (a dead letter is listed apart), and a person acting on it
 * as stuck (a redelivery, the step by hand) would run it beside Take Due Events.
 */
function stuck(table: ClaimTable): string {
	const kept = table.capabilities.events
		? ` AND NOT EXISTS (SELECT 1 FROM ${eventTableRef(table.ref).qualified} AS v WHERE v.key = t.key)`
		: '';
	return `${expiredSql(table.layout, 't', '$1')} AND t.first_seen < $1 - make_interval(secs => $2)${kept}`;
}

async function clockOf(table: ClaimTable, now: Date | undefined): Promise<Date> {
	const clock = await table.pool.query<{ now: Date }>(
		`SELECT COALESCE($1::timestamptz, ${DB_NOW}) AS now`,
		[now ?? null],
	);
	return clock.rows[0].now;
}
