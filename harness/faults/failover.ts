import { Client } from 'pg';

import type { OwnPostgres } from '../postgres/server';
import type { TransactionPooler } from '../postgres/transactionPooler';

/** The stopped primary's shutdown checkpoint: a busy server's takes seconds; a test server's, milliseconds. */
const SHUTDOWN_CHECKPOINT_MS = 1_500;
/** How long a failover manager takes to see the primary gone and promote the standby. */
const PROMOTE_AFTER_MS = 2_000;

/**
 * A failover behind PgBouncer, as an operator or a failover manager does it: the primary stops (fast
 * shutdown: sessions cut at once, then a shutdown checkpoint that takes a while), the standby is promoted,
 * and PgBouncer is pointed at it and reloaded. `whileStopping` runs once the primary refuses logins.
 *
 * While the primary shuts down, PgBouncer's next server login is refused ("the database system is shutting
 * down"), and from then on it answers every query at once with 08P01 "server login has been failing" until
 * a login succeeds, at the earliest server_login_retry (15 s) later; the probe here makes that login, as
 * some client of a busy site would.
 */
export async function failOver(options: {
	primary: OwnPostgres;
	standby: OwnPostgres;
	pooler: TransactionPooler;
	whileStopping?: () => void;
}): Promise<{ failoverMs: number }> {
	const { primary, standby, pooler } = options;
	const stoppedAt = Date.now();
	const stopping = primary.stopSlowly(SHUTDOWN_CHECKPOINT_MS);
	await pooler.untilLoginsFail(primary.url);
	options.whileStopping?.();
	await stopping;
	await new Promise((resolve) => setTimeout(resolve, PROMOTE_AFTER_MS));
	await standby.promote();
	pooler.repoint(standby.url);
	return { failoverMs: Date.now() - stoppedAt };
}

/**
 * Stops the standby's WAL receiver (SIGSTOP): a synchronous primary's commits are then written in its own
 * WAL and wait for the standby's answer (wait event SyncRep) — committed, not yet acknowledged to their
 * clients. Returns what lets it go on (SIGCONT), so the standby receives that WAL after all.
 */
export async function pauseWalReceiver(standby: OwnPostgres): Promise<() => void> {
	const client = new Client({ connectionString: standby.url });
	await client.connect();
	try {
		const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_wal_receiver');
		if (rows.length !== 1) throw new Error('the standby has no WAL receiver');
		const { pid } = rows[0];
		process.kill(pid, 'SIGSTOP');
		return () => process.kill(pid, 'SIGCONT');
	} finally {
		await client.end();
	}
}
