import type { Pool } from 'pg';

import { awaitBurstEnd } from './awaitBurstEnd';
import type { Burst } from './burstRecord';
import type { BurstTables } from './burstTables';
import type { Collected } from './collectItem';
import { giveBackBursts } from './settleBursts';
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
 * late) is not among them. When one wait fails, the others stop at their next look, and every burst
 * this execution holds is given back (giveBackBursts) before the failure is thrown: a failed execution
 * neither goes on taking bursts after it ended nor keeps any for a lease.
 */
export async function takeHeldBursts(
	pool: Pool,
	tables: BurstTables,
	claimId: string,
	leaseMs: number,
	held: HeldBurst[],
	cancelled?: AbortSignal,
): Promise<Array<{ burst: Burst; index: number }>> {
	// Aborted by the first failure, or when the execution is cancelled.
	const stop = new AbortController();
	if (cancelled?.aborted) stop.abort();
	else cancelled?.addEventListener('abort', () => stop.abort(), { once: true });
	// Its own bursts, and those it takes over on the way: what it gives back if it fails.
	const holds = held.map(({ collected }) => collected.burstId);
	// The failure that stopped the others, not the cancellations it caused.
	const failure: { happened: boolean; reason?: unknown } = { happened: false };
	const failed = (reason: unknown) => {
		if (!failure.happened) Object.assign(failure, { happened: true, reason });
		stop.abort();
	};
	const taken = await Promise.all(
		held.map(async ({ index, key, collected }) => {
			try {
				const own =
					collected.role === 'leading'
						? await heldBurst(pool, tables, collected.burstId, claimId)
						: await awaitBurstEnd(pool, tables, collected.burstId, claimId, stop.signal);
				if (!own) return [];
				const orphans = await takeDueBursts(pool, tables, claimId, leaseMs, TAKEOVERS_PER_KEY, {
					key,
				});
				holds.push(...orphans.map((orphan) => orphan.id));
				return [...orphans, own].map((row) => ({ row, index }));
			} catch (error) {
				failed(error);
				return [];
			}
		}),
	);
	const rows = taken.flat();
	const bursts = failure.happened
		? []
		: await withItems(
				pool,
				tables,
				rows.map(({ row }) => row),
			).catch((error: unknown) => {
				failed(error);
				return [];
			});
	if (failure.happened) {
		// A give-back that fails too leaves the bursts to their lease: the first failure is the one to report.
		await giveBackBursts(pool, tables, claimId, holds).catch(() => undefined);
		throw failure.reason;
	}
	return bursts.map((burst, position) => ({ burst, index: rows[position].index }));
}
