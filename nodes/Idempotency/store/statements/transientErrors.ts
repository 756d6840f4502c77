import type { Pool, PoolClient } from 'pg';
import { processClock } from '../../../shared/processClock';

/**
 * Errors after which the same statement may be sent again on a fresh connection: the server went away
 * or closed our session (restart, failover, pg_terminate_backend), or rolled the statement back
 * (serialization failure, deadlock). Claims stay correct on a retry because each attempt carries the
 * same claim ID (see claimKeys).
 */
const TRANSIENT_SQLSTATES = new Set([
	'57P01',
	'57P02',
	'57P03',
	'08000',
	'08003',
	'08006',
	'08001',
	'08004',
	'40001',
	'40P01',
	// The server closed a connection that sat idle (idle_session_timeout) or idle in a transaction.
	'57P05',
	'25P03',
]);
/** Rolled back by the server, or sent to a session it had already closed: the statement certainly did nothing. */
const ROLLED_BACK_SQLSTATES = new Set(['40001', '40P01', '57P05', '25P03']);
/**
 * A server that is up but refuses the write for now: read-only (a standby, mid-failover), a full disk, a
 * lock held past lock_timeout, statement_timeout. The statement was rolled back. Worth waiting out only
 * where the work is already done (Complete, Release); a claim answers its sender at once instead.
 */
const REFUSAL_SQLSTATES = new Set(['25006', '53000', '53100', '53200', '55P03', '57014']);
/** A read-only answer means this connection reaches the wrong server: a fresh one may reach the primary. */
const WRONG_SERVER_SQLSTATES = new Set(['25006']);
/**
 * PgBouncer's own errors while the server behind it is away (stopped, restarting, failing over). It gives
 * every error of its own SQLSTATE 08P01, so they are told apart by message; any other 08P01 (a protocol
 * violation, a pooler limit such as max_client_conn) is not retried.
 */
const POOLER_SQLSTATE = '08P01';
/** The pooler handed the statement to no server: it certainly did nothing. */
const POOLER_NOT_SENT = [
	// A login to the server failed (refused, "the database system is shutting down"): PgBouncer tries again
	// only after server_login_retry (15 s by default) and refuses the clients waiting until then.
	/server login has been failing/i,
	/cannot connect to server/i,
	// The client waited for a server connection longer than query_wait_timeout.
	/query_wait_timeout/i,
	/client_login_timeout \(server down\)/i,
];
/** The server connection ended under the statement: it may have committed. */
const POOLER_SERVER_AWAY = [/server conn crashed\?/i, ...POOLER_NOT_SENT];
const TRANSIENT_MESSAGES = [
	/Connection terminated/i,
	/Client has encountered a connection error/i,
	/Connection ended unexpectedly/i,
];
const TRANSIENT_CODES = new Set([
	'ECONNRESET',
	'ECONNREFUSED',
	'EPIPE',
	'ETIMEDOUT',
	'EHOSTUNREACH',
	'ENETUNREACH',
]);

export function isTransientDatabaseError(error: unknown): boolean {
	// Not `instanceof Error`: socket errors can come from another realm (a sandbox, a test runner) and fail it.
	if (typeof error !== 'object' || error === null) return false;
	const { code, message } = error as { code?: unknown; message?: unknown };
	if (typeof code === 'string' && (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_CODES.has(code)))
		return true;
	if (typeof message !== 'string') return false;
	if (code === POOLER_SQLSTATE) return POOLER_SERVER_AWAY.some((pattern) => pattern.test(message));
	return TRANSIENT_MESSAGES.some((pattern) => pattern.test(message));
}

/** The server refused a write for now (read-only, disk full, a lock or statement timeout): rolled back. */
export function isRefusal(error: unknown): boolean {
	return REFUSAL_SQLSTATES.has((error as { code?: unknown } | null)?.code as string);
}

/** A pooler's answer that it sent the statement to no server. */
function notSentByPooler(error: unknown): boolean {
	const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
	return (
		code === POOLER_SQLSTATE &&
		typeof message === 'string' &&
		POOLER_NOT_SENT.some((pattern) => pattern.test(message))
	);
}

/** How long a statement keeps being retried while the database is away. */
export interface RetryBudget {
	totalMs: number;
	/** Also retry while the server refuses writes (REFUSAL_SQLSTATES), not only while it is away. */
	throughRefusals?: boolean;
	/**
	 * Retry only when the failed attempt certainly did nothing (it never reached the server, or the server
	 * rolled it back): for work that no claim ID makes safe to send twice (an item collected into a burst).
	 */
	unappliedOnly?: boolean;
}

/**
 * A claim answers a waiting webhook request, so it retries only through a short blip; the caller fails
 * and the provider retries later. Completing or releasing runs after the business step's work is done,
 * so it rides out a restart or a failover (well inside the default 300 s lease) instead of throwing the
 * work away.
 */
export const CLAIM_RETRY: RetryBudget = { totalMs: 8_000 };
export const SETTLE_RETRY: RetryBudget = { totalMs: 60_000, throughRefusals: true };

function ignoreError(): void {}

/** Connections that already carry the listener below: it is added once per connection, not per statement. */
const listening = new WeakSet<PoolClient>();

export interface Attempted<T> {
	value: T;
	/** How many earlier attempts failed after the statement reached the server: it may have committed. */
	lostAttempts: number;
}

/**
 * Runs `run` on a pooled connection, again on a fresh one after a transient error, with growing pauses
 * (0.1 s doubling to 2 s) until the budget is spent. A connection that failed is destroyed, not reused.
 */
export async function withTransientRetry<T>(
	pool: Pool,
	run: (client: PoolClient) => Promise<T>,
	budget: RetryBudget,
): Promise<Attempted<T>> {
	const started = processClock.nowMs();
	let lostAttempts = 0;
	for (let attempt = 1; ; attempt++) {
		let client: PoolClient | undefined;
		let failure: unknown;
		try {
			client = await pool.connect();
			// A checked-out client whose server goes away emits 'error'; unheard, that would crash n8n. The
			// failing query reports the same error below. (While idle, the pool's own listener handles it.)
			if (!listening.has(client)) {
				client.on('error', ignoreError);
				listening.add(client);
			}
			const value = await run(client);
			client.release();
			return { value, lostAttempts };
		} catch (error) {
			failure = error;
		}
		const code = (failure as { code?: string } | undefined)?.code ?? '';
		const refused = REFUSAL_SQLSTATES.has(code);
		const transient = isTransientDatabaseError(failure);
		// A failed connection, or one that reaches a read-only server, is destroyed rather than reused.
		client?.release(transient || WRONG_SERVER_SQLSTATES.has(code) ? (failure as Error) : undefined);
		// A failure while connecting never reached the server; one after it may have committed.
		const mayHaveApplied =
			transient &&
			client !== undefined &&
			!ROLLED_BACK_SQLSTATES.has(code) &&
			!notSentByPooler(failure);
		if (mayHaveApplied) lostAttempts++;
		const pause = Math.min(2_000, 100 * 2 ** (attempt - 1));
		const retryable =
			(transient && !(mayHaveApplied && budget.unappliedOnly === true)) ||
			(refused && budget.throughRefusals === true);
		if (!retryable || processClock.nowMs() - started + pause > budget.totalMs) throw failure;
		await processClock.sleep(pause);
	}
}
