/**
 * Where a restart hurt the sub-workflow templates (between the business commit and Complete) the write-once
 * templates have no window: their write and Complete commit in one transaction (Write and Complete). The
 * inbox storms aim the restart at the nearest moment there is: one event's write has inserted its row and
 * made its Complete, and sleeps before its commit (a planned slow write, INBOX_PLAN_SQL). Both must then
 * roll back together, and the event still end with exactly one business row.
 */
import type { Pool } from 'pg';

import type { StackOnOwnAppServer } from '../../harness/stackForSuite';
import { sleepingWrites } from './inbox';
import { waitFor } from './waitFor';

export interface RestartInsideWrite {
	/** The event whose Write and Complete the restart cut. */
	key: string;
	/** Its business rows and its claim as committed when the restart came: none, and not completed. */
	atRestart: { businessRows: number; claimCompleted: boolean };
	downMs: number;
}

/**
 * Restarts the workflows' server while the write of `key` (planned to sleep on this attempt) sleeps inside
 * its transaction, and reads first what of it had committed.
 */
export async function restartInsideWrite(options: {
	suite: StackOnOwnAppServer;
	pool: Pool;
	key: string;
	downMs: number;
	timeoutMs: number;
}): Promise<RestartInsideWrite> {
	const { suite, pool, key, downMs } = options;
	await waitFor(
		async () => (await sleepingWrites(pool)).some((write) => write.key === key),
		options.timeoutMs,
		`the write of ${key} to sleep inside its transaction`,
	);
	const { rows } = await pool.query<{ business_rows: number; completed: boolean }>(
		`SELECT (SELECT count(*)::int FROM business_log WHERE event_key = $1) AS business_rows,
		        coalesce((SELECT lease_until IS NULL FROM processed_events WHERE key = $1), false) AS completed`,
		[key],
	);
	await suite.appServer().restart(downMs);
	return {
		key,
		atRestart: { businessRows: rows[0].business_rows, claimCompleted: rows[0].completed },
		downMs,
	};
}
