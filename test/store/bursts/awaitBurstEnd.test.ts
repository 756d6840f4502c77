/**
 * A holder's wait for its burst to end, with the looks' own schedule replaced by a sleep the test holds:
 * what ends the wait is a look, an item that fills the burst (in this process, a wake-up), or a takeover.
 */
import { awaitBurstEnd } from '../../../nodes/Idempotency/store/bursts/awaitBurstEnd';
import { takeDueBursts } from '../../../nodes/Idempotency/store/bursts/takeBursts';
import { signalSettled } from '../../../nodes/Idempotency/store/claims/settleSignals';
import { testPool } from '../../support/database';
import { burstRow, freshBurstTables } from '../../support/freshBurstTables';

const pool = testPool(4);
afterAll(() => pool.end());

const never = () => new Promise<void>(() => undefined);

/** A sleep that records each pause asked for and, at each, does what the test says instead of waiting. */
function heldSleep(onPause: (pause: number) => Promise<void>) {
	const pauses: number[] = [];
	const sleep = async (ms: number) => {
		pauses.push(ms);
		await onPause(pauses.length);
	};
	return { pauses, sleep };
}

describe("a holder's wait for its burst", () => {
	it('takes a burst whose quiet period is over at the first look, without a pause', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1', { quietMs: 0 });
		const { pauses, sleep } = heldSleep(async () => undefined);
		const taken = await awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, sleep);
		expect(taken).toMatchObject({ id: held.burstId, holder: 'holder-1', ended_by: 'quiet' });
		expect(pauses).toEqual([]);
		expect(await burstRow(pool, tables, held.burstId)).toMatchObject({
			state: 'running',
			lease_due: false,
		});
	});

	it('looks at least once a second while the quiet period runs, and takes the burst once an item fills it', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1', { maxItems: 2 });
		// An item from another process fills the burst during the second pause: no wake-up, the look sees it.
		const { pauses, sleep } = heldSleep(async (pause) => {
			if (pause === 2) await collect('chat', { n: 1 }, 'joiner-2', { maxItems: 2 });
		});
		const taken = await awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, sleep);
		expect(taken).toMatchObject({ id: held.burstId, ended_by: 'maxItems' });
		expect(pauses).toEqual([1000, 1000]);
	});

	it('wakes at once when an item collected in this process fills the burst', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1', { maxItems: 2 });
		const waited = awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, never);
		const filling = await collect('chat', { n: 1 }, 'joiner-2', { maxItems: 2 });
		expect(filling.filled).toBe(true);
		signalSettled(tables.bursts, [filling.burstId]);
		expect(await waited).toMatchObject({ id: held.burstId, ended_by: 'maxItems' });
	});

	it('gives up the burst that another execution took over (its lease ran out): undefined', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1', { maxItems: 1, leaseMs: 0 });
		await takeDueBursts(pool, tables, 'flush-2', 60_000, 10);
		expect(await awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, never)).toBe(
			undefined,
		);
	});

	it('takes its own running burst again (an earlier look took it and its answer was lost)', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1', { quietMs: 0 });
		await awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, never);
		expect(
			await awaitBurstEnd(pool, tables, held.burstId, 'holder-1', undefined, never),
		).toMatchObject({ id: held.burstId, holder: 'holder-1' });
	});

	it('stops, the burst left to a takeover, when the execution is cancelled while the burst is open', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const held = await collect('chat', { n: 0 }, 'holder-1');
		const cancel = new AbortController();
		const { sleep } = heldSleep(async () => cancel.abort());
		await expect(
			awaitBurstEnd(pool, tables, held.burstId, 'holder-1', cancel.signal, sleep),
		).rejects.toThrow('the execution was cancelled while its burst was open');
		expect(await burstRow(pool, tables, held.burstId)).toMatchObject({ state: 'open' });
	});
});
