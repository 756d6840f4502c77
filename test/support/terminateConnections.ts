import type { Pool } from 'pg';

export interface TerminatedConnections {
	total: number;
	/** Connections that were running a statement at that moment (the rest were idle in a pool). */
	active: number;
	/** The first 120 characters of each of those statements. */
	activeQueries: string[];
	/** How long the outage waited for a statement in flight. */
	waitedMs: number;
}

/**
 * pg_terminate_backend on every connection of the given database users at once: what their clients see in
 * a database outage or failover. Statements are short, so a kill at a random instant mostly finds idle
 * pooled connections, which a pool replaces silently; this waits (up to `waitMs`, then kills anyway) for a
 * moment when one of their statements matching `whileRunning` (a LIKE pattern) is in flight, so the outage
 * also cuts work. The caller's own connection is spared.
 */
export async function terminateConnectionsOf(
	admin: Pool,
	users: string[],
	{ whileRunning = '%', waitMs = 10_000 }: { whileRunning?: string; waitMs?: number } = {},
): Promise<TerminatedConnections> {
	const started = Date.now();
	for (;;) {
		const force = Date.now() - started >= waitMs;
		// One statement, one snapshot of pg_stat_activity: the check and the kill see the same connections.
		// "active" is as of that snapshot: a statement may still finish before its backend takes the signal.
		const { rows } = await admin.query<{
			state: string | null;
			query: string;
			terminated: boolean;
		}>(
			`WITH theirs AS (
				SELECT pid, state, left(query, 120) AS query FROM pg_stat_activity
				WHERE usename = ANY($1) AND pid <> pg_backend_pid() AND backend_type = 'client backend')
			 SELECT state, query, pg_terminate_backend(pid) AS terminated FROM theirs
			 WHERE $2::boolean OR EXISTS (SELECT 1 FROM theirs WHERE state = 'active' AND query LIKE $3)`,
			[users, force, whileRunning],
		);
		if (rows.length > 0 || force) {
			const terminated = rows.filter((row) => row.terminated);
			const active = terminated.filter((row) => row.state === 'active');
			return {
				total: terminated.length,
				active: active.length,
				activeQueries: active.map((row) => row.query.replace(/\s+/g, ' ')),
				waitedMs: Date.now() - started,
			};
		}
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
}
