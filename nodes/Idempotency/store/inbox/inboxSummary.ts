import type { PoolClient } from 'pg';

import type { ClaimTable } from '../table/claimTable';
import { DB_NOW, deadSql, leaseEndedSql } from '../record/claimConditions';
import { keptEventsSql } from './inboxFilter';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { inTransaction } from '../statements/inTransaction';

/**
 * A kept event's state, from its claim's lease and what the event table holds:
 * - `dead`: parked after Max Attempts (dead_at set); waits for a person.
 * - `due`: its lease has ended (a backoff passed, or the execution that ran it died); the next Take Due
 *   Events takes it.
 * - `scheduled`: its lease runs and a failed run is recorded (last_error): Retry Later set it to the end
 *   of a backoff. The table does not tell that apart from a run of the event after a failure (Take Due
 *   Events or a sender's retry running it again, for the length of its lease): both count here.
 * - `running`: its lease runs and no run of it has failed: its first run, or a run after an execution died.
 */
export type KeptEventState = 'due' | 'running' | 'scheduled' | 'dead';

export const KEPT_EVENT_STATES: readonly KeptEventState[] = ['due', 'running', 'scheduled', 'dead'];

export interface StateCount {
	count: number;
	/** Seconds since the oldest of them was received; null when there are none. */
	oldestSeconds: number | null;
}

export interface ScopeSummary {
	/** The Scope of the claim node that kept the events; null for events kept without one. */
	scope: string | null;
	due: StateCount & {
		/** Seconds the longest-waiting due event has been due: how far Take Due Events is behind. */
		lagSeconds: number | null;
	};
	running: StateCount;
	scheduled: StateCount;
	dead: StateCount & {
		/** Seconds since the longest-parked dead letter was parked. */
		longestParkedSeconds: number | null;
	};
}

export interface InboxSummary {
	/** One per scope with kept events, keys without a scope first (always there, with zeros when empty). */
	scopes: ScopeSummary[];
	now: Date;
}

/**
 * Counts kept events by scope and state in one statement, from the event table and each event's claim
 * by its key (keptEventsSql), so its cost follows the events in flight, not the keys the claim table
 * holds (bench 1e, beside 10 M keys). Events whose claim is gone or completed (left behind, dropped by the
 * next Take Due Events) are not counted.
 */
export async function summarizeInbox(table: ClaimTable): Promise<InboxSummary> {
	// The claim node's Scope, as the event table records it (a table made before it recorded none).
	const scope = table.capabilities.eventScope ? 'v.scope' : 'NULL::text';
	const state =
		`CASE WHEN ${deadSql('v')} THEN 'dead' ` +
		`WHEN ${leaseEndedSql('c', 'clock.now')} THEN 'due' ` +
		"WHEN v.last_error IS NOT NULL THEN 'scheduled' ELSE 'running' END";
	const age = (column: string) => `floor(extract(epoch FROM clock.now - min(${column})))::float8`;
	const sql =
		`WITH clock AS (SELECT ${DB_NOW} AS now), ` +
		`kept AS (SELECT ${scope} AS scope, ${state} AS state, v.received_at, v.dead_at, ` +
		'COALESCE(c.lease_until, v.received_at) AS due_since ' +
		`FROM clock, ${keptEventsSql(table)}) ` +
		`SELECT clock.now, g.scope, g.state, g.n, g.oldest, g.lag, g.parked FROM clock LEFT JOIN (` +
		`SELECT scope, state, count(*)::integer AS n, ${age('received_at')} AS oldest, ` +
		`CASE WHEN state = 'due' THEN ${age('due_since')} END AS lag, ` +
		`CASE WHEN state = 'dead' THEN ${age('dead_at')} END AS parked ` +
		'FROM kept, clock GROUP BY scope, state, clock.now) AS g ON true';
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			withoutJit(client, () =>
				client.query<{
					now: Date;
					scope: string | null;
					state: KeptEventState | null;
					n: number | null;
					oldest: number | null;
					lag: number | null;
					parked: number | null;
				}>(sql),
			),
		SETTLE_RETRY,
	);
	const byScope = new Map<string | null, ScopeSummary>([[null, emptyScope(null)]]);
	for (const row of value.rows) {
		if (row.state === null) continue;
		let scope = byScope.get(row.scope);
		if (!scope) byScope.set(row.scope, (scope = emptyScope(row.scope)));
		const counted = { count: row.n ?? 0, oldestSeconds: row.oldest };
		if (row.state === 'due') scope.due = { ...counted, lagSeconds: row.lag };
		else if (row.state === 'dead') scope.dead = { ...counted, longestParkedSeconds: row.parked };
		else scope[row.state] = counted;
	}
	const scopes = [...byScope.values()].sort((a, b) =>
		a.scope === null ? -1 : b.scope === null ? 1 : a.scope < b.scope ? -1 : 1,
	);
	return { scopes, now: value.rows[0].now };
}

/** A scope with nothing kept: what an inbox without an event table summarises to, too. */
export function emptyScope(scope: string | null): ScopeSummary {
	return {
		scope,
		due: { count: 0, oldestSeconds: null, lagSeconds: null },
		running: { count: 0, oldestSeconds: null },
		scheduled: { count: 0, oldestSeconds: null },
		dead: { count: 0, oldestSeconds: null, longestParkedSeconds: null },
	};
}

/**
 * Runs one read with JIT compilation off: the per-key lookups make the planner's estimate for 100,000
 * events pass the JIT thresholds, and compiling took longer than the query (1.0 of 1.3 s, measured on
 * PostgreSQL 15). SET LOCAL ends with the transaction, also behind a transaction pooler.
 */
function withoutJit<T>(client: PoolClient, read: () => Promise<T>): Promise<T> {
	return inTransaction(client, async () => {
		await client.query('SET LOCAL jit = off');
		return read();
	});
}
