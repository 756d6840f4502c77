import type { ClaimTable } from './claimTable';
import { storedClaimToken } from './storedValues';
import { processingSql } from './tableLayout';
import { SETTLE_RETRY, withTransientRetry } from './transientErrors';

export interface SettleRequest {
	key: string;
	/**
	 * The claim ID the claim node gave its holder. Complete without one marks the key done whoever holds
	 * it; Release always needs one, so it can only ever undo the caller's own claim.
	 */
	claimToken: string | null;
}

/** What a claim's row is once Complete or Release has run for it. */
export type SettledState = 'completed' | 'released' | 'processing' | 'not_found';

/**
 * Marks claims done. A completed row keeps no claim token, so no Release can delete it afterwards; a
 * Complete that finds the key already completed (its own earlier attempt, or another holder's) reports
 * it completed too, which keeps Complete safe to retry after a lost answer.
 */
export async function completeClaims(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<SettledState[]> {
	if (!table.capabilities.leases) {
		// Without lease columns every claim is final already (the caller refuses claim IDs here).
		return settle(
			table,
			`${targets(table, 'true', false)}, done AS (SELECT key FROM targets)`,
			requests,
			'completed',
		);
	}
	const completed = `NOT ${processingSql(table.layout, 't')}`;
	const matches = `(u.token IS NULL OR t.claim_token = u.token OR (t.claim_token IS NULL AND ${completed}))`;
	// A compact row is completed by clearing its lease; the original layout also says so in its status.
	const status = table.layout.statusColumn ? "status = 'completed', " : '';
	return settle(
		table,
		`${targets(table, matches)}, done AS (UPDATE ${table.ref.qualified} AS e SET ${status}lease_until = NULL, claim_token = NULL ` +
			`WHERE e.key IN (SELECT key FROM targets) RETURNING e.key)`,
		requests,
		'completed',
	);
}

/** Deletes claims so the provider's next retry is new: only the holder's, and never a completed one. */
export async function releaseClaims(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<SettledState[]> {
	return settle(
		table,
		`${targets(table, 't.claim_token = u.token')}, done AS (DELETE FROM ${table.ref.qualified} AS e ` +
			`WHERE e.key IN (SELECT key FROM targets) RETURNING e.key)`,
		requests,
		'released',
	);
}

/** Whether each claim was completed: it is, now, whoever completed it. */
export async function completeKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	return (await completeClaims(table, requests)).map((state) => state === 'completed');
}

/** Whether each claim was released (its row deleted by this call). */
export async function releaseKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	return (await releaseClaims(table, requests)).map((state) => state === 'released');
}

/**
 * Per (key, claim ID) pair: whether it was settled, and otherwise what its row is. The `cur` join reads the
 * statement's snapshot, taken before `done` ran, which for a pair left unsettled is the row as it stays.
 */
function settledPairs(table: ClaimTable): string {
	const processing = table.capabilities.leases ? processingSql(table.layout, 'cur') : 'false';
	return (
		'SELECT u.n, done.key IS NOT NULL AS settled, cur.key IS NOT NULL AS present, ' +
		`coalesce(${processing}, false) AS processing ` +
		`FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n) ` +
		'LEFT JOIN targets ON targets.n = u.n LEFT JOIN done ON done.key = targets.key ' +
		`LEFT JOIN ${table.ref.qualified} AS cur ON cur.key = u.k`
	);
}

/** The rows each (key, claim ID) pair matches, locked in key order first so concurrent batches cannot deadlock. */
function targets(table: ClaimTable, matches: string, lock = true): string {
	return (
		`WITH targets AS (SELECT t.key, u.n FROM ${table.ref.qualified} AS t ` +
		`JOIN unnest($1::text[], $2::${table.layout.tokenType}[]) WITH ORDINALITY AS u(k, token, n) ` +
		`ON t.key = u.k AND ${matches}${lock ? ' ORDER BY t.key COLLATE "C" FOR UPDATE OF t' : ''})`
	);
}

/**
 * What each request's row is now. A (key, claim ID) pair is sent once: a batch holding one key under a stale
 * and a current claim ID settles only the current one, and reports the stale one by the row it left.
 */
async function settle(
	table: ClaimTable,
	sql: string,
	requests: SettleRequest[],
	settledState: 'completed' | 'released',
): Promise<SettledState[]> {
	if (requests.length === 0) return [];
	const pairId = (request: SettleRequest) => JSON.stringify([request.key, request.claimToken]);
	const pairs = [...new Map(requests.map((request) => [pairId(request), request])).values()];
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{ n: string; settled: boolean; present: boolean; processing: boolean }>(
				`${sql} ${settledPairs(table)}`,
				[
					pairs.map((pair) => pair.key),
					pairs.map((pair) =>
						pair.claimToken === null ? null : storedClaimToken(table.layout, pair.claimToken),
					),
				],
			),
		SETTLE_RETRY,
	);
	const states = new Map<string, SettledState>();
	for (const row of value.rows) {
		const state: SettledState = row.settled
			? settledState
			: !row.present
				? 'not_found'
				: row.processing
					? 'processing'
					: 'completed';
		states.set(pairId(pairs[Number(row.n) - 1]), state);
	}
	return requests.map((request) => states.get(pairId(request)) ?? 'not_found');
}
