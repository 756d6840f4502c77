import type { Pool } from 'pg';

import { DB_LIVE_NOW, mineSql } from '../record/claimConditions';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { SETTLE_RETRY, type RetryBudget } from '../statements/transientErrors';
import type { BurstTables } from './burstTables';

export interface BurstClaim {
	burstId: string;
	claimId: string;
}

/**
 * Complete: the work ran; the burst and its items go, if this holder still holds it (after a takeover
 * the new holder completes it). Release: the work failed; the lease ends now, so the next Flush Due
 * Bursts (or takeover) runs the burst again. Either answers, per request, whether it settled it. Like a
 * claim's Complete and Release, it runs after the work and rides out a restart or a failover (SETTLE_RETRY).
 */
export async function settleBursts(
	pool: Pool,
	tables: BurstTables,
	operation: 'complete' | 'release',
	claims: BurstClaim[],
): Promise<boolean[]> {
	if (claims.length === 0) return [];
	// The holder is compared on the row being changed, so a takeover committed meanwhile is re-checked.
	const mine =
		'unnest($1::bigint[], $2::text[]) AS u(id, holder) ' +
		`WHERE b.id = u.id AND ${mineSql('b', 'u.holder', 'holder')} AND b.state = 'running'`;
	const sql =
		operation === 'complete'
			? `WITH gone AS (DELETE FROM ${tables.bursts} b USING ${mine} RETURNING b.id, b.holder), ` +
				`items AS (DELETE FROM ${tables.items} WHERE burst_id IN (SELECT id FROM gone)) ` +
				'SELECT id::text AS id, holder FROM gone'
			: `UPDATE ${tables.bursts} b SET lease_until = ${DB_LIVE_NOW} FROM ${mine} RETURNING b.id::text AS id, b.holder`;
	const ids = claims.map((claim) => claim.burstId);
	const { value, lostAttempts } = await queryStatementWithRetry<{ id: string; holder: string }>(
		pool,
		namedStatement(sql),
		[ids, claims.map((claim) => claim.claimId)],
		SETTLE_RETRY,
	);
	// By burst and holder: a request with another claim ID for a burst settled in the same batch was not.
	const settled = new Set(value.rows.map((row) => settledKey(row.id, row.holder)));
	// A Complete whose answer was lost may have deleted its bursts already: one that is gone was completed.
	if (operation === 'complete' && lostAttempts > 0) {
		const { value: stored } = await queryStatementWithRetry<{ id: string }>(
			pool,
			namedStatement(`SELECT id::text AS id FROM ${tables.bursts} WHERE id = ANY($1::bigint[])`),
			[ids],
			SETTLE_RETRY,
		);
		const left = new Set(stored.rows.map((row) => row.id));
		for (const claim of claims)
			if (!left.has(claim.burstId)) settled.add(settledKey(claim.burstId, claim.claimId));
	}
	return claims.map((claim) => settled.has(settledKey(claim.burstId, claim.claimId)));
}

const settledKey = (burstId: string, claimId: string) => JSON.stringify([burstId, claimId]);

/** A give-back is sent again only briefly: it follows a failure, and without it the lease still ends. */
const GIVE_BACK_RETRY: RetryBudget = { totalMs: 5_000 };

/**
 * Ends now the lease of those bursts this holder still holds, whatever their state (open, ended,
 * running): an execution that failed gives them back, so Flush Due Bursts (or the next burst of the key)
 * runs them at once, as it runs a dead holder's once its lease is over.
 */
export async function giveBackBursts(
	pool: Pool,
	tables: BurstTables,
	claimId: string,
	burstIds: string[],
): Promise<void> {
	if (burstIds.length === 0) return;
	await queryStatementWithRetry(
		pool,
		namedStatement(
			`UPDATE ${tables.bursts} b SET lease_until = ${DB_LIVE_NOW} WHERE b.id = ANY($1::bigint[]) AND ${mineSql('b', '$2', 'holder')}`,
		),
		[burstIds, claimId],
		GIVE_BACK_RETRY,
	);
}
