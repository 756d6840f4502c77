import type { ClaimTable } from '../table/claimTable';
import { eventTableRef, scopeColumnMissing } from './eventTable';
import { DB_NOW, deadSql, dueSql, processingSql } from '../record/claimConditions';

/** Which kept events a bulk operation acts on: never one that runs (its lease has not ended). */
export type EventState = 'dead' | 'due' | 'deadOrDue';

/** What an operator picks kept events by; every field left out matches every event. */
export interface EventFilter {
	state: EventState;
	/** Events kept by a claim node with this Scope (the event table records it, as Take Due Events reads it). */
	scope?: string;
	/** Parked at or after / before (timestamptz text); a due event has never been parked, so it never matches. */
	parkedFrom?: string;
	parkedBefore?: string;
	/** Received at or after / before (timestamptz text). */
	receivedFrom?: string;
	receivedBefore?: string;
	/** The last error contains this text, in any case: plain text, not a pattern. */
	errorContains?: string;
	attemptsAtLeast?: number;
	attemptsAtMost?: number;
}

/**
 * Each kept event `v` beside its claim's lease `c.lease_until`, for a claim that is processing (an event
 * whose claim is gone or completed is left over: Take Due Events drops it). It reads the event table,
 * which holds only the events in flight, and each claim by its primary key: the OFFSET 0 fence keeps that
 * a lookup, where the planner would hash the events and scan the whole claim table once they number
 * about 100,000 (10 M keys read for each summary; bench 1e measures both).
 */
export function keptEventsSql(table: ClaimTable): string {
	return (
		`${eventTableRef(table.ref).qualified} AS v CROSS JOIN LATERAL (SELECT c.lease_until FROM ${table.ref.qualified} AS c ` +
		`WHERE c.key = v.key AND ${processingSql(table.layout, 'c')} OFFSET 0) AS c`
	);
}

/**
 * The conditions a filter puts on a kept event `v` and its claim's `c.lease_until`, joined by AND: due (its
 * lease has ended) or parked (its lease never ends), never one that runs; every value a user typed is a
 * parameter appended to `values`.
 */
export function eventFilterSql(table: ClaimTable, filter: EventFilter, values: unknown[]): string {
	if (filter.scope !== undefined && !table.capabilities.eventScope)
		throw scopeColumnMissing(table.ref);
	const param = (value: unknown) => `$${values.push(value)}`;
	const dead = deadSql('v');
	// As Take Due Events reads it: a lease that has ended, so no execution holds the event now.
	const due = dueSql('v', 'c', DB_NOW);
	const where = [
		filter.state === 'dead' ? dead : filter.state === 'due' ? due : `(${dead} OR (${due}))`,
	];
	if (filter.scope !== undefined) where.push(`v.scope = ${param(filter.scope)}`);
	if (filter.parkedFrom !== undefined)
		where.push(`v.dead_at >= ${param(filter.parkedFrom)}::timestamptz`);
	if (filter.parkedBefore !== undefined)
		where.push(`v.dead_at < ${param(filter.parkedBefore)}::timestamptz`);
	if (filter.receivedFrom !== undefined)
		where.push(`v.received_at >= ${param(filter.receivedFrom)}::timestamptz`);
	if (filter.receivedBefore !== undefined)
		where.push(`v.received_at < ${param(filter.receivedBefore)}::timestamptz`);
	// strpos, not ILIKE: `%` and `_` in the text an operator pasted from an error are plain characters.
	if (filter.errorContains !== undefined)
		where.push(`strpos(lower(v.last_error), lower(${param(filter.errorContains)})) > 0`);
	if (filter.attemptsAtLeast !== undefined)
		where.push(`v.attempts >= ${param(filter.attemptsAtLeast)}::integer`);
	if (filter.attemptsAtMost !== undefined)
		where.push(`v.attempts <= ${param(filter.attemptsAtMost)}::integer`);
	return where.join(' AND ');
}
