/**
 * Taking bursts over and reading their items, on a real Postgres. A lease of zero on a burst that ends as
 * it lands (Max Items 1) has run out by the next statement's clock; an hour's has not: no test waits.
 */
import {
	dropEmptyWindows,
	heldBurst,
	takeDueBursts,
	withItems,
} from '../../../nodes/Idempotency/store/bursts/takeBursts';
import { testPool } from '../../support/database';
import { burstRow, freshBurstTables } from '../../support/freshBurstTables';

const pool = testPool(4);
afterAll(() => pool.end());

/** Ends as it lands, and its lease has run out by the next statement. */
const DUE = { maxItems: 1, leaseMs: 0 };

describe('taking bursts over', () => {
	it('takes the bursts whose lease ran out, oldest first, for the new holder; the others stay', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const due = [
			await collect('a', { n: 0 }, 'dead-1', DUE),
			await collect('b', { n: 1 }, 'dead-2', DUE),
		];
		const live = await collect('c', { n: 2 }, 'alive-3', { maxItems: 1 });
		const taken = await takeDueBursts(pool, tables, 'flush-4', 60_000, 10);
		expect(taken.map((row) => [row.id, row.key, row.holder, row.takeovers, row.ended_by])).toEqual([
			[due[0].burstId, 'a', 'flush-4', 1, 'maxItems'],
			[due[1].burstId, 'b', 'flush-4', 1, 'maxItems'],
		]);
		expect(await burstRow(pool, tables, due[0].burstId)).toMatchObject({
			state: 'running',
			holder: 'flush-4',
			lease_due: false,
		});
		expect(await burstRow(pool, tables, live.burstId)).toMatchObject({ holder: 'alive-3' });
		// Taken: not due again until its new lease runs out.
		expect(await takeDueBursts(pool, tables, 'flush-5', 60_000, 10)).toEqual([]);
	});

	it('takes at most the limit, and only the key, or the key prefix, asked for', async () => {
		const { collect, tables } = freshBurstTables(pool);
		for (const key of ['tg:1', 'tg:2', 'tg:3', 'slack:1'])
			await collect(key, {}, `dead-${key}`, DUE);
		const keys = async (only: { key?: string; keyPrefix?: string }, limit = 10) =>
			(await takeDueBursts(pool, tables, 'flush', 0, limit, only)).map((row) => row.key);
		expect(await keys({ key: 'slack:1' })).toEqual(['slack:1']);
		expect(await keys({ keyPrefix: 'tg:' }, 2)).toEqual(['tg:1', 'tg:2']);
		// A lease of zero again: taken, and due at once.
		expect(await keys({ keyPrefix: 'tg:' })).toEqual(['tg:1', 'tg:2', 'tg:3']);
	});

	it('two takes at once take different bursts', async () => {
		const { collect, tables } = freshBurstTables(pool);
		for (let n = 0; n < 6; n++) await collect(`k${n}`, { n }, `dead-${n}`, DUE);
		const [one, two] = await Promise.all([
			takeDueBursts(pool, tables, 'flush-1', 60_000, 3),
			takeDueBursts(pool, tables, 'flush-2', 60_000, 3),
		]);
		const ids = [...one, ...two].map((row) => row.id);
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids.length).toBeGreaterThanOrEqual(3);
	});

	it("never takes a leading item's empty window; dropping windows removes it once its quiet period is over", async () => {
		const { collect, tables } = freshBurstTables(pool);
		const leading = { edge: 'leading' as const, quietMs: 0, leaseMs: 0 };
		const alone = await collect('chat', { n: 0 }, 'leader-1', leading);
		const windows = () =>
			pool.query(`SELECT count(*)::int AS n FROM ${tables.bursts} WHERE item_count = 0`);
		expect((await windows()).rows).toEqual([{ n: 1 }]);
		const taken = await takeDueBursts(pool, tables, 'flush', 60_000, 10);
		expect(taken.map((row) => [row.id, row.ended_by])).toEqual([[alone.burstId, 'leading']]);
		expect(await dropEmptyWindows(pool, tables)).toBe(1);
		expect((await windows()).rows).toEqual([{ n: 0 }]);
	});
});

describe('a held burst and its items', () => {
	it("a leading item's burst is its holder's, no one else's", async () => {
		const { collect, tables } = freshBurstTables(pool);
		const alone = await collect('chat', { n: 0 }, 'leader-1', { edge: 'leading' });
		expect(await heldBurst(pool, tables, alone.burstId, 'leader-1')).toMatchObject({
			id: alone.burstId,
			holder: 'leader-1',
			edge: 'leading',
			ended_by: 'leading',
		});
		expect(await heldBurst(pool, tables, alone.burstId, 'someone-else')).toBeUndefined();
	});

	it('reads every item of the bursts taken, in arrival order, with when each arrived', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const first = await collect('a', { n: 0 }, 'dead-1', { maxItems: 3, leaseMs: 0 });
		await collect('a', { n: 1 }, 'joiner', { maxItems: 3, leaseMs: 0 });
		const last = await collect('a', { n: 2 }, 'joiner', { maxItems: 3, leaseMs: 0 });
		const other = await collect('b', { n: 9 }, 'dead-2', DUE);
		const bursts = await withItems(
			pool,
			tables,
			await takeDueBursts(pool, tables, 'flush', 60_000, 10),
		);
		expect(
			bursts.map((burst) => [burst.id, burst.key, burst.items, burst.claimId, burst.takeovers]),
		).toEqual([
			[first.burstId, 'a', [{ n: 0 }, { n: 1 }, { n: 2 }], 'flush', 1],
			[other.burstId, 'b', [{ n: 9 }], 'flush', 1],
		]);
		expect(bursts[0].arrivedAt.map((at) => at.getTime())).toEqual(
			[...bursts[0].arrivedAt.map((at) => at.getTime())].sort((x, y) => x - y),
		);
		expect(bursts[0].arrivedAt[2]).toEqual(last.arrivedAt);
		expect(bursts[0]).toMatchObject({ edge: 'trailing', endedBy: 'maxItems' });
		expect(await withItems(pool, tables, [])).toEqual([]);
	});
});
