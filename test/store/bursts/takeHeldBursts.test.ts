import { takeHeldBursts } from '../../../nodes/Idempotency/store/bursts/takeHeldBursts';
import { testPool } from '../../support/database';
import { freshBurstTables } from '../../support/freshBurstTables';

const pool = testPool(4);
afterAll(() => pool.end());

describe("an execution's held bursts", () => {
	it("come back with their items, each with its key's bursts whose holder died, oldest first", async () => {
		const { collect, tables } = freshBurstTables(pool);
		const dead = await collect('chat', { n: 0 }, 'dead-1', { maxItems: 1, leaseMs: 0 });
		const ended = { quietMs: 0 };
		const own = await collect('chat', { n: 1 }, 'holder-2', ended);
		const other = await collect('other', { n: 2 }, 'holder-2', ended);
		const held = [
			{ index: 0, key: 'chat', collected: own },
			{ index: 1, key: 'other', collected: other },
		];
		const bursts = await takeHeldBursts(pool, tables, 'holder-2', 60_000, held);
		expect(
			bursts.map(({ burst, index }) => [
				index,
				burst.id,
				burst.items,
				burst.claimId,
				burst.takeovers,
			]),
		).toEqual([
			[0, dead.burstId, [{ n: 0 }], 'holder-2', 1],
			[0, own.burstId, [{ n: 1 }], 'holder-2', 0],
			[1, other.burstId, [{ n: 2 }], 'holder-2', 0],
		]);
	});

	it("a leading item's burst is taken as it is: it runs at once", async () => {
		const { collect, tables } = freshBurstTables(pool);
		const alone = await collect('chat', { n: 0 }, 'leader-1', { edge: 'leading' });
		const bursts = await takeHeldBursts(pool, tables, 'leader-1', 60_000, [
			{ index: 3, key: 'chat', collected: alone },
		]);
		expect(bursts.map(({ burst, index }) => [index, burst.id, burst.endedBy])).toEqual([
			[3, alone.burstId, 'leading'],
		]);
	});
});
