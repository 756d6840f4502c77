import type { EventTableRef } from '../inbox/eventTable';
import { leaseRunsSql, processingSql, runningSql } from './claimConditions';
import type { TableLayout } from './tableLayout';

/** What decides whether a claim row may be deleted by age (Purge) or by scope (Clear). */
export interface LiveClaimRule {
	layout: TableLayout;
	/** The event table beside the claim table, where there is one. */
	events: EventTableRef | null;
	/** SQL for the clock a lease is compared with. */
	now: string;
	/** SQL for a boolean and a timestamp: when true, a dead letter parked before that time may go. */
	deadLettersBefore?: { enabled: string; cutoff: string };
}

/**
 * SQL true while the claim row `alias` must stay: a processing claim whose lease still runs (its holder
 * would lose it and a retry would run the work again), or one that keeps an event still in flight,
 * whatever its lease says: due (its holder died), scheduled by Retry Later, requeued, or parked as a dead
 * letter. A dead letter may go only where the caller allows it. Only for tables with lease columns.
 */
export function liveClaimSql(rule: LiveClaimRule, alias: string): string {
	if (!rule.events) return runningSql(rule.layout, alias, rule.now);
	const events = rule.events.qualified;
	const old = rule.deadLettersBefore;
	const mayGo = old
		? ` AND NOT EXISTS (SELECT 1 FROM ${events} AS v WHERE v.key = ${alias}.key AND ${old.enabled} AND v.dead_at < ${old.cutoff})`
		: '';
	return (
		`(${processingSql(rule.layout, alias)}${mayGo} AND (${leaseRunsSql(alias, rule.now)} ` +
		`OR EXISTS (SELECT 1 FROM ${events} AS v WHERE v.key = ${alias}.key)))`
	);
}
