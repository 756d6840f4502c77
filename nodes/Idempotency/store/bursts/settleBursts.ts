import type { Queryable } from '../statements/queryable';
import type { BurstTables } from './burstTables';

export interface BurstClaim {
	burstId: string;
	claimId: string;
}

/**
 * Complete: the work ran; the burst and its items go, if this holder still holds it (after a takeover
 * the new holder completes it). Release: the work failed; the lease ends now, so the next Flush Due
 * Bursts (or takeover) runs the burst again. Either answers, per request, whether it settled it.
 */
export async function settleBursts(
	db: Queryable,
	tables: BurstTables,
	operation: 'complete' | 'release',
	claims: BurstClaim[],
): Promise<boolean[]> {
	if (claims.length === 0) return [];
	// The holder is compared on the row being changed, so a takeover committed meanwhile is re-checked.
	const mine =
		'unnest($1::bigint[], $2::text[]) AS u(id, holder) ' +
		"WHERE b.id = u.id AND b.holder = u.holder AND b.state = 'running'";
	const sql =
		operation === 'complete'
			? `WITH gone AS (DELETE FROM ${tables.bursts} b USING ${mine} RETURNING b.id), ` +
				`items AS (DELETE FROM ${tables.items} WHERE burst_id IN (SELECT id FROM gone)) ` +
				'SELECT id::text AS id FROM gone'
			: `UPDATE ${tables.bursts} b SET lease_until = clock_timestamp() FROM ${mine} RETURNING b.id::text AS id`;
	const { rows } = await db.query<{ id: string }>(sql, [
		claims.map((claim) => claim.burstId),
		claims.map((claim) => claim.claimId),
	]);
	const settled = new Set(rows.map((row) => row.id));
	return claims.map((claim) => settled.has(claim.burstId));
}
