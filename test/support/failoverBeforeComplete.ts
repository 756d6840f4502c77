import { Client, Pool } from 'pg';

import type { OwnPostgres } from '../../harness/postgres/server';
import type { TransactionPooler } from './transactionPooler';

export interface FailoverBeforeComplete {
	/** The event whose Complete the failover cut. */
	key: string;
	/** Milliseconds from the primary's stop to PgBouncer's reload with the promoted standby. */
	failoverMs: number;
}

/** The stopped primary's shutdown checkpoint: a busy server's takes seconds; a test server's, milliseconds. */
const SHUTDOWN_CHECKPOINT_MS = 1_500;
/** How long a failover manager takes to see the primary gone and promote the standby. */
const PROMOTE_AFTER_MS = 2_000;

/**
 * Lands a failover exactly between one event's business-step commit and its Complete, behind PgBouncer:
 * once the event is claimed (its business step must be slow enough for this, e.g. a trigger that sleeps
 * for that key), a connection of the test's own locks the claim row, so the Complete that follows the
 * business step has to wait for it; as soon as the business row is there and that Complete waits, the
 * primary stops (fast shutdown: sessions cut at once, then a shutdown checkpoint that takes a while),
 * the standby is promoted, and PgBouncer is pointed at it and reloaded, as an operator or a failover
 * manager does.
 *
 * While the primary shuts down, PgBouncer's next server login is refused ("the database system is shutting
 * down"), and from then on it answers every query at once with 08P01 "server login has been failing" until
 * a login succeeds, at the earliest server_login_retry (15 s) later. On a busy site some client makes that
 * login before the cut Complete comes back; here the test's own probe does, so Complete's retry meets that
 * answer, as it did in the field.
 */
export async function failoverBeforeComplete(options: {
	primary: OwnPostgres;
	standby: OwnPostgres;
	pooler: TransactionPooler;
	key: string;
	timeoutMs: number;
}): Promise<FailoverBeforeComplete> {
	const { primary, standby, pooler, key } = options;
	const deadline = Date.now() + options.timeoutMs;
	const until = async (what: string, check: () => Promise<boolean>) => {
		while (!(await check())) {
			if (Date.now() > deadline)
				throw new Error(`failover before Complete: timed out waiting until ${what}`);
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
	};
	// Straight to the primary, not through the pooler, as a failover manager watches it.
	const admin = new Pool({ connectionString: primary.url, max: 1 });
	const holder = new Client({ connectionString: primary.url });
	// The stop ends these connections on purpose.
	admin.on('error', () => undefined);
	holder.on('error', () => undefined);
	const exists = async (sql: string) => ((await admin.query(sql, [key])).rowCount ?? 0) > 0;
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
		await until('Complete waits on the claim row', () =>
			exists(
				// Complete's statement (store/settleKeys.ts) is the one that updates through `done AS (UPDATE …`.
				`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%done AS (UPDATE%' AND $1::text IS NOT NULL`,
			),
		);
		const stoppedAt = Date.now();
		const stopping = primary.stopSlowly(SHUTDOWN_CHECKPOINT_MS);
		await pooler.untilLoginsFail(primary.url);
		await stopping;
		await new Promise((resolve) => setTimeout(resolve, PROMOTE_AFTER_MS));
		await standby.promote();
		pooler.repoint(standby.url);
		return { key, failoverMs: Date.now() - stoppedAt };
	} finally {
		await holder.end().catch(() => undefined);
		await admin.end().catch(() => undefined);
	}
}
