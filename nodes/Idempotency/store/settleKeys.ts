import type { Queryable } from './queryable';
import type { TableCapabilities } from './tableSchema';
import type { TableRef } from './tableRef';
import { withTransientRetry } from './transientErrors';

export interface SettleRequest {
	key: string;
	/** When given, only the claim holding this token is settled: a delivery whose lease was taken over cannot undo the new holder's claim. */
	claimToken: string | null;
}

/**
 * The keys each request settled. Rows are locked in key order first, so concurrent batches cannot deadlock.
 * Both operations are idempotent, which makes them safe to retry after a lost connection.
 */
export async function completeKeys(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: SettleRequest[],
): Promise<Set<string>> {
	if (!capabilities.leases) {
		// A seed-shaped table has no status: every claim in it is already final.
		return existingKeys(db, ref, requests);
	}
	const sql =
		`${lockedTargets(ref)} UPDATE ${ref.qualified} AS e SET status = 'completed', lease_until = NULL ` +
		'FROM targets WHERE e.key = targets.key RETURNING e.key';
	return settle(db, sql, requests);
}

export async function releaseKeys(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: SettleRequest[],
): Promise<Set<string>> {
	if (!capabilities.leases && requests.some((request) => request.claimToken)) {
		throw new Error(`table ${ref.schema}.${ref.table} has no claim_token column, so a claim token cannot be checked`);
	}
	const sql = `${lockedTargets(ref, capabilities.leases)} DELETE FROM ${ref.qualified} AS e USING targets WHERE e.key = targets.key RETURNING e.key`;
	return settle(db, sql, requests);
}

function lockedTargets(ref: TableRef, checkTokens = true): string {
	const tokenCheck = checkTokens ? ' AND (u.token IS NULL OR t.claim_token = u.token)' : '';
	return (
		`WITH targets AS (SELECT t.key FROM ${ref.qualified} AS t JOIN unnest($1::text[], $2::text[]) AS u(k, token) ` +
		`ON t.key = u.k${tokenCheck} ORDER BY t.key COLLATE "C" FOR UPDATE OF t)`
	);
}

async function settle(db: Queryable, sql: string, requests: SettleRequest[]): Promise<Set<string>> {
	if (requests.length === 0) return new Set();
	const result = await withTransientRetry(() =>
		db.query<{ key: string }>(sql, [requests.map((r) => r.key), requests.map((r) => r.claimToken || null)]),
	);
	return new Set(result.rows.map((row) => row.key));
}

async function existingKeys(db: Queryable, ref: TableRef, requests: SettleRequest[]): Promise<Set<string>> {
	const result = await withTransientRetry(() =>
		db.query<{ key: string }>(`SELECT key FROM ${ref.qualified} WHERE key = ANY($1::text[])`, [requests.map((r) => r.key)]),
	);
	return new Set(result.rows.map((row) => row.key));
}
