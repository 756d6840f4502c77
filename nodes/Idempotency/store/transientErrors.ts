/**
 * Errors after which the same statement may simply be sent again on a fresh connection: the server
 * went away or closed our session (restart, failover, pg_terminate_backend). Claims stay correct on a
 * retry because each attempt carries the same claim token (see claimKeys).
 */
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', '40001', '40P01']);
const TRANSIENT_MESSAGES = [/Connection terminated/i, /connection timeout/i, /Client has encountered a connection error/i];
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

export function isTransientDatabaseError(error: unknown): boolean {
	if (!(error instanceof Error)) return false;
	const code = (error as { code?: string }).code;
	if (code && (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_CODES.has(code))) return true;
	return TRANSIENT_MESSAGES.some((pattern) => pattern.test(error.message));
}

export async function withTransientRetry<T>(run: () => Promise<T>, attempts = 4): Promise<T> {
	let lastError: unknown;
	for (let attempt = 1; attempt <= attempts; attempt++) {
		try {
			return await run();
		} catch (error) {
			lastError = error;
		}
		if (!isTransientDatabaseError(lastError)) break;
		// A restarting server needs a moment; grow the wait a little each time.
		if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 50 * attempt * attempt));
	}
	throw lastError;
}
