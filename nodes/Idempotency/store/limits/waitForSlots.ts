import type { Pool } from 'pg';

import { processClock } from '../../../shared/processClock';
import { CancelledError } from '../../errors';
import { pauseUnlessSettled } from '../claims/settleSignals';
import { freeSlots } from './freeSlots';
import type { LimitTables } from './limitTables';
import { takeSlot, type SlotAnswer, type SlotRequest } from './takeSlot';

/** The first look comes soon (a short step frees its slot soon), then every 200 ms at most. */
const FIRST_LOOK_MS = 10;
const LOOK_GROWTH = 1.5;
const LONGEST_GAP_MS = 200;

/**
 * Takes a slot for each request, in input order; those that found none try again, for up to `waitMs`,
 * until they have one. Each look is one short statement through the pool: no connection is kept between
 * looks and no session state is used, so it holds behind a transaction pooler and across queue-mode
 * workers. Where the holder runs in this process, its Free Slot wakes the waiters of its key at once
 * (settleSignals); a slot freed elsewhere, or whose lease ran out, is found by the next look. A request
 * still without a slot when the time is up keeps its last answer; a cancelled execution fails.
 * After a wait, the slots taken before it are taken again, so that each leaves with its whole lease. A
 * database failure or a cancel fails them all, and gives back what they took.
 */
export async function takeSlots(
	pool: Pool,
	tables: LimitTables,
	requests: SlotRequest[],
	waitMs: number,
	cancelled?: AbortSignal,
	sleep: (ms: number) => Promise<void> = processClock.sleep,
): Promise<SlotAnswer[]> {
	let answered = false;
	try {
		const answers = await takeOrWait(pool, tables, requests, waitMs, cancelled, sleep);
		answered = true;
		return answers;
	} finally {
		// Failed: every item fails, none goes on to the work, so the slots taken so far (an answer lost, too)
		// are given back rather than held until their leases end. Once, at once: the error is what they carry.
		if (!answered)
			await freeSlots(
				pool,
				tables,
				requests.map(({ slotId }) => slotId),
				{ totalMs: 0 },
			).catch(() => undefined);
	}
}

async function takeOrWait(
	pool: Pool,
	tables: LimitTables,
	requests: SlotRequest[],
	waitMs: number,
	cancelled: AbortSignal | undefined,
	sleep: (ms: number) => Promise<void>,
): Promise<SlotAnswer[]> {
	const deadline = processClock.nowMs() + waitMs;
	const answers: SlotAnswer[] = [];
	for (const request of requests) answers.push(await takeSlot(pool, tables, request));
	let waited = false;
	let waiting = requests.flatMap((_, position) => (answers[position].taken ? [] : [position]));
	for (let look = 0; waiting.length > 0 && !cancelled?.aborted; look++) {
		const left = deadline - processClock.nowMs();
		if (left <= 0) break;
		const keys = waiting.map((position) => requests[position].key);
		await pauseUnlessSettled(tables.slots, keys, Math.min(left, gapBefore(look)), sleep);
		for (const position of waiting)
			answers[position] = await takeSlot(pool, tables, requests[position]);
		waiting = waiting.filter((position) => !answers[position].taken);
		waited = true;
	}
	// A cancelled execution runs no Free Slot: failing, it gives back what its items took.
	if (cancelled?.aborted)
		throw new CancelledError('the execution was cancelled while its items waited for slots');
	// A slot taken before the wait had its lease running out while the others waited (past its end, another
	// execution may hold it now): each is taken again by its slot ID, its own slot found and its lease run
	// from now, or, given away meanwhile, another free one or none.
	if (waited)
		for (const [position, answer] of answers.entries())
			if (answer.taken) answers[position] = await takeSlot(pool, tables, requests[position]);
	return answers;
}

/** Gaps grow from 10 ms to 200 ms, each shortened by up to a fifth so that waiters spread out. */
function gapBefore(look: number): number {
	const gap = Math.min(LONGEST_GAP_MS, FIRST_LOOK_MS * LOOK_GROWTH ** look);
	return Math.round(gap * (0.8 + Math.random() * 0.2));
}
