import { Client, type Pool } from 'pg';

/**
 * Runs `fault` exactly between one event's business-step commit and its Complete: once the event is
 * claimed (its business step must be slow enough for this, e.g. a trigger that sleeps for that key), a
 * connection of the test's own locks the claim row, so the Complete that follows the business step has to
 * wait for it; as soon as the business row is there and that Complete waits, `fault` runs (given the
 * milliseconds since the business row's commit) while the lock is still held. The holder connects before
 * the claim, so the lock is taken within the business step's sleep on a busy machine.
 */
export async function whileCompleteWaits<T>(
	options: { admin: Pool; holderUrl: string; key: string; timeoutMs: number; fault: string },
	fault: (afterBusinessCommitMs: number) => Promise<T>,
): Promise<T> {
	const { admin, key } = options;
	const deadline = Date.now() + options.timeoutMs;
	const until = async (what: string, check: () => Promise<boolean>) => {
		while (!(await check())) {
			if (Date.now() > deadline)
				throw new Error(`${options.fault} before Complete: timed out waiting until ${what}`);
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
	};
	const exists = async (sql: string) => ((await admin.query(sql, [key])).rowCount ?? 0) > 0;
	const holder = new Client({ connectionString: options.holderUrl });
	holder.on('error', () => undefined); // the fault ends this connection on purpose
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
				// Complete's statement (store/claims/settleKeys.ts) is the one that updates through `done AS (UPDATE …`.
				`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%done AS (UPDATE%' AND $1::text IS NOT NULL`,
			),
		);
		return await fault(Date.now() - committedAt);
	} finally {
		await holder.end().catch(() => undefined);
	}
}
