import { Pool } from 'pg';

import type { OwnPostgres } from '../postgres/server';
import { whileCompleteWaits } from './completeWaiting';
import type { TransactionPooler } from '../postgres/transactionPooler';

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
 * Lands a failover exactly between one event's business-step commit and its Complete, behind PgBouncer
 * (whileCompleteWaits): the primary stops (fast shutdown: sessions cut at once, then a shutdown checkpoint that takes a while),
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
	// Straight to the primary, not through the pooler, as a failover manager watches it.
	const admin = new Pool({ connectionString: primary.url, max: 1 });
	admin.on('error', () => undefined); // the stop ends its connection on purpose
	try {
		return await whileCompleteWaits(
			{ admin, holderUrl: primary.url, key, timeoutMs: options.timeoutMs, fault: 'failover' },
			async () => {
				const stoppedAt = Date.now();
				const stopping = primary.stopSlowly(SHUTDOWN_CHECKPOINT_MS);
				await pooler.untilLoginsFail(primary.url);
				await stopping;
				await new Promise((resolve) => setTimeout(resolve, PROMOTE_AFTER_MS));
				await standby.promote();
				pooler.repoint(standby.url);
				return { key, failoverMs: Date.now() - stoppedAt };
			},
		);
	} finally {
		await admin.end().catch(() => undefined);
	}
}
