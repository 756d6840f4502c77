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

/**
 * Marks claims done. A completed row keeps no claim token, so no Release can delete it afterwards; a
 * Complete that finds the key already completed (its own earlier attempt, or another holder's) reports
 * it completed too, which keeps Complete safe to retry after a lost answer.
 */
export async function completeKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	if (!table.capabilities.leases) {
		// Without lease columns every claim is final already (the caller refuses claim IDs here).
		return settle(table, `${targets(table, 'true', false)} SELECT n FROM targets`, requests);
	}
	const completed = `NOT ${processingSql(table.layout, 't')}`;
	const matches = `(u.token IS NULL OR t.claim_token = u.token OR (t.claim_token IS NULL AND ${completed}))`;
	// A compact row is completed by clearing its lease; the original layout also says so in its status.
	const status = table.layout.statusColumn ? "status = 'completed', " : '';
	return settle(
		table,
		`${targets(table, matches)}, done AS (UPDATE ${table.ref.qualified} AS e SET ${status}lease_until = NULL, claim_token = NULL ` +
			`WHERE e.key IN (SELECT key FROM targets) RETURNING e.key) ${settledPairs}`,
		requests,
	);
}

/** Deletes claims so the provider's next retry is new: only the holder's, and never a completed one. */
export async function releaseKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	return settle(
		table,
		`${targets(table, 't.claim_token = u.token')}, done AS (DELETE FROM ${table.ref.qualified} AS e ` +
			`WHERE e.key IN (SELECT key FROM targets) RETURNING e.key) ${settledPairs}`,
		requests,
	);
}

/** The positions of the (key, claim ID) pairs that matched a row that was then settled. */
const settledPairs = 'SELECT targets.n FROM targets JOIN done ON done.key = targets.key';

/** The rows each (key, claim ID) pair matches, locked in key order first so concurrent batches cannot deadlock. */
function targets(table: ClaimTable, matches: string, lock = true): string {
	return (
		`WITH targets AS (SELECT t.key, u.n FROM ${table.ref.qualified} AS t ` +
		`JOIN unnest($1::text[], $2::${table.layout.tokenType}[]) WITH ORDINALITY AS u(k, token, n) ` +
		`ON t.key = u.k AND ${matches}${lock ? ' ORDER BY t.key COLLATE "C" FOR UPDATE OF t' : ''})`
	);
}

/**
 * Whether each request was settled. A (key, claim ID) pair is sent once: a batch holding one key under
 * a stale and a current claim ID settles only the current one, and reports only that one.
 */
async function settle(
	table: ClaimTable,
	sql: string,
	requests: SettleRequest[],
): Promise<boolean[]> {
	if (requests.length === 0) return [];
	const pairId = (request: SettleRequest) => JSON.stringify([request.key, request.claimToken]);
	const pairs = [...new Map(requests.map((request) => [pairId(request), request])).values()];
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{ n: string }>(sql, [
				pairs.map((pair) => pair.key),
				pairs.map((pair) =>
					pair.claimToken === null ? null : storedClaimToken(table.layout, pair.claimToken),
				),
			]),
		SETTLE_RETRY,
	);
	const settled = new Set(value.rows.map((row) => pairId(pairs[Number(row.n) - 1])));
	return requests.map((request) => settled.has(pairId(request)));
}
