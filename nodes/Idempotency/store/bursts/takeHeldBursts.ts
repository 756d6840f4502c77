import type { Pool } from 'pg';

import { awaitBurstEnd } from './awaitBurstEnd';
import type { Burst } from './burstRecord';
import type { BurstTables } from './burstTables';
import type { Collected } from './collectItem';
import { heldBurst, takeDueBursts, withItems } from './takeBursts';

/** The most bursts of its key, taken over from dead holders, that a holder runs besides its own. */
const TAKEOVERS_PER_KEY = 10;

/** A burst this execution holds: its key, what collecting its item answered, and the item's input index. */
export interface HeldBurst {
	index: number;
	key: string;
	collected: Collected;
}

/**
 * Waits for every burst this execution holds to end and takes it, then takes over its key's bursts
 * whose holder died; reads all their items in one statement. Each comes back with the input index of
 * the item that made this execution its holder. A burst taken over from this holder (it looked too
 * late) is not among them.
 */
export async function takeHeldBursts(
	pool: Pool,
	tables: BurstTables,
	claimId: string,
	leaseMs: number,
	held: HeldBurst[],
	cancelled?: AbortSignal,
): Promise<Array<{ burst: Burst; index: number }>> {
	const taken = await Promise.all(
		held.map(async ({ index, key, collected }) => {
			const own =
				collected.role === 'leading'
					? await heldBurst(pool, tables, collected.burstId, claimId)
					: await awaitBurstEnd(pool, tables, collected.burstId, claimId, cancelled);
			if (!own) return [];
			const orphans = await takeDueBursts(pool, tables, claimId, leaseMs, TAKEOVERS_PER_KEY, {
				key,
			});
			return [...orphans, own].map((row) => ({ row, index }));
		}),
	);
	const rows = taken.flat();
	const bursts = await withItems(
		pool,
		tables,
		rows.map(({ row }) => row),
	);
	return bursts.map((burst, position) => ({ burst, index: rows[position].index }));
}
