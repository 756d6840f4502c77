import type { Pool } from 'pg';

import { processClock } from '../../../shared/processClock';
import { CancelledError } from '../../errors';
import { TAKEN_COLUMNS, type TakenRow } from './burstRecord';
import { pauseUnlessSettled } from '../claims/settleSignals';
import { DB_LIVE_NOW, mineSql } from '../record/claimConditions';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import type { RetryBudget } from '../statements/transientErrors';
import type { BurstTables } from './burstTables';

/**
 * A holder looks at its burst no less often than this: a burst filled by an item in another process is
 * seen at the next look. A quiet period's end is known in advance, and the look comes right after it.
 */
const LONGEST_GAP_MS = 1000;
/** Looked at this long after the quiet period's end as the database reported it, for clock granularity. */
const AFTER_END_MS = 2;

/**
 * One look: takes the burst to run if it ended (`running`, with a fresh lease), otherwise says how long
 * its quiet period still runs. A burst already running under this holder is its own (an earlier look
 * took it and its answer was lost). No row at all: the burst is no longer this holder's (another
 * execution took it over after the lease ran out).
 */
const lookSql = (t: BurstTables) => `
WITH taken AS (
	UPDATE ${t.bursts} b SET state = 'running', lease_until = ${DB_LIVE_NOW} + b.lease
	WHERE b.id = $1 AND ${mineSql('b', '$2', 'holder')} AND b.state IN ('open', 'ended')
		AND (b.state = 'ended' OR b.quiet_until <= clock_timestamp() OR b.item_count >= b.max_items)
	RETURNING ${TAKEN_COLUMNS}
)
SELECT taken.*, true AS ended, 0::float8 AS wait_ms FROM taken
UNION ALL
SELECT ${TAKEN_COLUMNS}, b.state = 'running',
	GREATEST(0, EXTRACT(EPOCH FROM b.quiet_until - clock_timestamp()) * 1000)::float8
FROM ${t.bursts} b
WHERE b.id = $1 AND ${mineSql('b', '$2', 'holder')} AND NOT EXISTS (SELECT FROM taken)`;

/** A look that fails for a moment (a restart, a failover) is sent again for up to this long. */
const LOOK_RETRY: RetryBudget = { totalMs: 60_000 };

type LookRow = TakenRow & { ended: boolean; wait_ms: number };

/**
 * Waits, without holding a connection between looks, until the burst this holder started ends, and
 * takes it to run. Returns undefined when the burst is no longer this holder's. A look that keeps
 * failing throws: the burst stays in the table, and after its lease another execution or Flush Due
 * Bursts runs it.
 */
export async function awaitBurstEnd(
	pool: Pool,
	tables: BurstTables,
	burstId: string,
	claimId: string,
	cancelled?: AbortSignal,
	sleep: (ms: number) => Promise<void> = processClock.sleep,
): Promise<TakenRow | undefined> {
	for (;;) {
		const statement = namedStatement(lookSql(tables));
		const { rows } = (
			await queryStatementWithRetry<LookRow>(pool, statement, [burstId, claimId], LOOK_RETRY)
		).value;
		if (rows.length === 0) return undefined;
		const [row] = rows;
		if (row.ended) return row;
		if (cancelled?.aborted)
			throw new CancelledError('the execution was cancelled while its burst was open');
		// The next look comes at the quiet period's end, or at once when an item of this process fills it.
		const gap = Math.min(LONGEST_GAP_MS, Math.ceil(row.wait_ms) + AFTER_END_MS);
		await pauseUnlessSettled(tables.bursts, [burstId], gap, sleep);
	}
}
