import { Client, type Pool } from 'pg';

import type { OwnPostgres } from '../../harness/postgres/server';

export interface RestartBeforeComplete {
	/** The event whose Complete the restart cut. */
	key: string;
	/** Milliseconds from the business row's commit to the restart. */
	afterBusinessCommitMs: number;
	downMs: number;
}

/**
 * Lands a Postgres restart exactly between one event's business-step commit and its Complete: once the
 * event is claimed (its business step must be slow enough for this, e.g. a trigger that sleeps for that
 * key), a connection of the test's own locks the claim row, so the Complete that follows the business
 * step has to wait for it; as soon as the business row is there and that Complete waits,
 * the server shuts down (fast, clients cut) and is started again after `downMs`. Everything of the
 * template that talks to that server at that moment sees the outage too.
 */
export async function restartBeforeComplete(options: {
	server: OwnPostgres;
	admin: Pool;
	adminUrl: string;
	key: string;
	downMs: number;
	timeoutMs: number;
}): Promise<RestartBeforeComplete> {
	const { server, admin, adminUrl, key, downMs } = options;
	const deadline = Date.now() + options.timeoutMs;
	const until = async (what: string, check: () => Promise<boolean>) => {
		while (!(await check())) {
			if (Date.now() > deadline)
				throw new Error(`restart before Complete: timed out waiting until ${what}`);
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
	};
	const exists = async (sql: string) => ((await admin.query(sql, [key])).rowCount ?? 0) > 0;

	// Connected before the claim, so the lock is taken within the business step's sleep on a busy machine.
	const holder = new Client({ connectionString: adminUrl });
	holder.on('error', () => undefined); // the restart ends this connection on purpose
	await holder.connect();
	try {
		await until('the event is claimed', () =>
			exists('SELECT 1 FROM processed_events WHERE key = $1'),
		);
		await holder.query('BEGIN');
		await holder.query('SELECT 1 FROM processed_events WHERE key = $1 FOR UPDATE', [key]);
		await until('the business step committed', () =>
			exists('SELECT 1 FROM business_log WHERE event_key = $1'),
		);
		const committedAt = Date.now();
		await until('Complete waits on the claim row', () =>
			exists(
				// Complete's statement (store/settleKeys.ts) is the one that updates through `done AS (UPDATE …`.
				`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%done AS (UPDATE%' AND $1::text IS NOT NULL`,
			),
		);
		const afterBusinessCommitMs = Date.now() - committedAt;
		await server.restart(downMs);
		return { key, afterBusinessCommitMs, downMs };
	} finally {
		await holder.end().catch(() => undefined);
	}
}
