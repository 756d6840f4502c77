import type { ClaimStatus } from './claimStatus';
import type { TableLayout } from './tableLayout';

/**
 * A claim's life as SQL, each condition written once for a claim row `alias` (and, for an event, the
 * kept event's row). Every statement of claims and the inbox asks these, so a held, expired, due or
 * parked claim means the same thing everywhere:
 * - processing: a leased claim not completed (its lease running, expired, or parked);
 * - mine: it holds this claim ID; held: processing and mine (a burst, store/bursts/, has a lease and a
 *   holder too, and asks the same lease and mine conditions);
 * - expired: processing and its lease has ended by the given clock; a lease of NULL has ended (a row of
 *   the original layout marked processing without one is taken over, listed as stuck and may be purged);
 * - parked: a dead letter, whose lease never ends (`infinity`) and whose event records when (`dead_at`);
 * - due: a kept event not parked whose claim's lease has ended.
 *
 * The clock is SQL too: the database's own (DB_NOW), never a worker's, since workers' clocks differ; a
 * caller passes its statement's clock (`$1`, `clock.now`, EXCLUDED.first_seen) where it has one.
 */

/** The database's clock. Unqualified on purpose: one name for the time every condition compares with. */
export const DB_NOW = 'now()';

/**
 * The database's clock as it runs on within a statement, not from its transaction's start: what a burst's
 * statements compare with, since each decides under the burst's row lock and the moment it got the lock
 * is the moment it serialises with the others (store/bursts/burstTables.ts).
 */
export const DB_LIVE_NOW = 'clock_timestamp()';

/** The lease of a parked claim (a dead letter): it never ends, so nothing takes it until Requeue. */
export const PARKED_LEASE = "'infinity'::timestamptz";

/** A lease read back is a parked claim's: pg gives Postgres' infinity as the number Infinity. */
export function isParkedLease(leaseUntil: Date | null): boolean {
	return leaseUntil?.valueOf() === Infinity;
}

/** A status word (claimStatus' vocabulary) as SQL text. */
export function statusSql(status: ClaimStatus): string {
	return `'${status}'`;
}

/** SQL true while the row `alias` is a leased claim still being processed (lease expired or not). */
export function processingSql(layout: TableLayout, alias: string): string {
	return layout.statusColumn
		? `${alias}.status = ${statusSql('processing')}`
		: `${alias}.lease_until IS NOT NULL`;
}

/** SQL for the status of the claim row `alias`: its status column, or what a compact row's lease says. */
export function claimStatusSql(layout: TableLayout, alias: string): string {
	return layout.statusColumn
		? `${alias}.status`
		: `CASE WHEN ${processingSql(layout, alias)} THEN ${statusSql('processing')} ELSE ${statusSql('completed')} END`;
}

/** SQL true when the lease of `alias` has ended by `clock`; a NULL lease has ended. */
export function leaseEndedSql(alias: string, clock: string): string {
	return `COALESCE(${alias}.lease_until, '-infinity') <= ${clock}`;
}

/** SQL true while the lease of `alias` runs at `clock` (the negation of leaseEndedSql, NULL included). */
export function leaseRunsSql(alias: string, clock: string): string {
	return `COALESCE(${alias}.lease_until, '-infinity') > ${clock}`;
}

/** A processing claim whose lease has ended by `clock`: its holder died or its backoff passed. */
export function expiredSql(layout: TableLayout, alias: string, clock: string): string {
	return `(${processingSql(layout, alias)} AND ${leaseEndedSql(alias, clock)})`;
}

/** A processing claim whose lease still runs at `clock`: someone is working on it. */
export function runningSql(layout: TableLayout, alias: string, clock: string): string {
	return `(${processingSql(layout, alias)} AND ${leaseRunsSql(alias, clock)})`;
}

/**
 * SQL true when `alias` holds the claim ID `claimId` (SQL); false, never NULL, when it holds none. A
 * claim row names its holder in claim_token, a burst in `holder`.
 */
export function mineSql(alias: string, claimId: string, holder = 'claim_token'): string {
	return `COALESCE(${alias}.${holder} = ${claimId}, false)`;
}

/** A processing claim held by the claim ID `claimId`: what only its holder may complete, retry or park. */
export function heldSql(layout: TableLayout, alias: string, claimId: string): string {
	return `${alias}.claim_token = ${claimId} AND ${processingSql(layout, alias)}`;
}

/** The claim row `alias` is parked: its lease is a dead letter's. */
export function parkedLeaseSql(alias: string): string {
	return `${alias}.lease_until = ${PARKED_LEASE}`;
}

/** The kept event `event` is a dead letter: parked after its last allowed run. */
export function deadSql(event: string): string {
	return `${event}.dead_at IS NOT NULL`;
}

/** The kept event `event`, whose claim is `claim`, is due: not parked, and its claim's lease has ended. */
export function dueSql(event: string, claim: string, clock: string): string {
	return `${event}.dead_at IS NULL AND ${leaseEndedSql(claim, clock)}`;
}

/** The assignments that complete a claim row: a compact row clears its lease, the original also says so in status. */
export function completedSetSql(layout: TableLayout): string[] {
	return [
		...(layout.statusColumn ? [`status = ${statusSql('completed')}`] : []),
		'lease_until = NULL',
		'claim_token = NULL',
	];
}
