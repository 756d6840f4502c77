/**
 * Slots on real tables: a key has at most N holders at a time, however many take at once; a slot comes
 * back when its holder frees it or its lease ends (the database's clock moved, never waited for); only
 * the holder frees it; a waiter finds a slot freed in this process at once, and holds no connection while
 * it waits. Asserted by what the functions answer and what the slot rows are afterwards.
 */
import { limitTables, withLimitTables } from '../../../nodes/Idempotency/store/limits/limitTables';
import { freeSlots } from '../../../nodes/Idempotency/store/limits/freeSlots';
import { takeSlot, type SlotRequest } from '../../../nodes/Idempotency/store/limits/takeSlot';
import { takeSlots } from '../../../nodes/Idempotency/store/limits/waitForSlots';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { testPool, uniqueTableName } from '../../support/database';
import { databaseClock } from '../../support/databaseClock';

const clock = databaseClock();
const pool = testPool(20);
afterAll(() => pool.end());

const fresh = () => limitTables(tableRef('public', uniqueTableName('limits')));
const request = (key: string, maxAtOnce: number, leaseMs = 60_000): SlotRequest => ({
	key,
	maxAtOnce,
	slotId: newClaimId(),
	leaseMs,
});
const take = (tables: ReturnType<typeof fresh>, slot: SlotRequest) =>
	withLimitTables(pool, tables, true, () => takeSlot(pool, tables, slot));

async function holders(tables: ReturnType<typeof fresh>, key: string): Promise<number> {
	const { rows } = await pool.query<{ n: number }>(
		`SELECT count(*)::int AS n FROM ${tables.slots} WHERE key = $1 AND lease_until > now()`,
		[key],
	);
	return rows[0].n;
}

describe('takeSlot', () => {
	it('gives N slots of a key and no more; other keys have their own', async () => {
		const tables = fresh();
		const answers = [];
		for (let i = 0; i < 4; i++) answers.push(await take(tables, request('a', 3)));
		expect(answers.map((answer) => answer.taken)).toEqual([true, true, true, false]);
		expect(answers.slice(0, 3).map((answer) => answer.taken && answer.slot)).toEqual([1, 2, 3]);
		expect(await take(tables, request('b', 3))).toMatchObject({ taken: true, slot: 1 });
		expect(await holders(tables, 'a')).toBe(3);
	});

	it('never gives more than N at once to concurrent takers', async () => {
		const tables = fresh();
		await take(tables, request('warm', 1));
		const answers = await Promise.all(
			Array.from({ length: 40 }, () => takeSlot(pool, tables, request('k', 2))),
		);
		expect(answers.filter((answer) => answer.taken)).toHaveLength(2);
		expect(await holders(tables, 'k')).toBe(2);
	});

	it('answers no slot with the seconds until the soonest lease ends, at least 1', async () => {
		const tables = fresh();
		await take(tables, request('a', 2, 30_000));
		await take(tables, request('a', 2, 10_400));
		expect(await take(tables, request('a', 2))).toEqual({ taken: false, retryAfterSeconds: 11 });
		await clock.advance(10.3);
		expect(await take(tables, request('a', 2))).toEqual({ taken: false, retryAfterSeconds: 1 });
	});

	it("gives a slot back once its holder's lease ends (a holder that died)", async () => {
		const tables = fresh();
		const dead = request('a', 1, 5_000);
		expect(await take(tables, dead)).toMatchObject({ taken: true });
		expect(await take(tables, request('a', 1))).toMatchObject({ taken: false });
		await clock.advance(5.1);
		const next = request('a', 1);
		expect(await take(tables, next)).toMatchObject({ taken: true, slot: 1 });
		// The dead holder's late free is refused: the slot is the new holder's now.
		expect(await freeSlots(pool, tables, [dead.slotId])).toEqual([false]);
		expect(await holders(tables, 'a')).toBe(1);
	});

	it("takes a slot freed or made after its own clock started, as a take's snapshot sees it", async () => {
		const tables = fresh();
		const holder = request('a', 1);
		await take(tables, holder);
		// now() is a transaction's start; its statement's snapshot comes later. BEGIN opens that gap wide:
		// the free and the seed below commit after this connection's clock started and before its take.
		const late = testPool(1);
		try {
			await late.query('BEGIN');
			await new Promise((resolve) => setTimeout(resolve, 20));
			expect(await freeSlots(pool, tables, [holder.slotId])).toEqual([true]);
			expect(await take(tables, request('b', 2))).toMatchObject({ taken: true, slot: 1 });
			expect(await takeSlot(late, tables, request('a', 1))).toMatchObject({ taken: true, slot: 1 });
			expect(await takeSlot(late, tables, request('b', 2))).toMatchObject({ taken: true, slot: 2 });
			await late.query('COMMIT');
		} finally {
			await late.end();
		}
	});

	it('takes no second slot when the same attempt is sent again', async () => {
		const tables = fresh();
		const slot = request('a', 3);
		expect(await take(tables, slot)).toMatchObject({ taken: true, slot: 1 });
		// The same slot again, its lease renewed.
		expect(await take(tables, slot)).toMatchObject({ taken: true, slot: 1 });
		expect(await holders(tables, 'a')).toBe(1);
	});
});

describe('freeSlots', () => {
	it("frees only the holder's slot, and says so once", async () => {
		const tables = fresh();
		const mine = request('a', 1);
		await take(tables, mine);
		expect(await freeSlots(pool, tables, [newClaimId(), mine.slotId])).toEqual([false, true]);
		expect(await freeSlots(pool, tables, [mine.slotId])).toEqual([false]);
		expect(await take(tables, request('a', 1))).toMatchObject({ taken: true, slot: 1 });
	});
});

describe('takeSlots (waiting)', () => {
	it('wakes when a slot of the key is freed in this process, long before its look would come', async () => {
		const tables = fresh();
		const holder = request('a', 1);
		await take(tables, holder);
		// Waits at most 10 s; a 1 s nap between looks (the sleep given) shows the wake-up is what ended it.
		const waiting = takeSlots(
			pool,
			tables,
			[request('a', 1)],
			10_000,
			undefined,
			() => new Promise((resolve) => setTimeout(resolve, 1_000)),
		);
		await new Promise((resolve) => setTimeout(resolve, 50));
		const started = Date.now();
		await freeSlots(pool, tables, [holder.slotId]);
		const [answer] = await waiting;
		expect(answer).toMatchObject({ taken: true, slot: 1 });
		expect(Date.now() - started).toBeLessThan(500);
	});

	it('holds no connection between looks', async () => {
		const tables = fresh();
		const small = testPool(1);
		try {
			await withLimitTables(small, tables, true, () => takeSlot(small, tables, request('a', 1)));
			const waiters = Array.from({ length: 5 }, () =>
				takeSlots(small, tables, [request('a', 1)], 2_000),
			);
			await new Promise((resolve) => setTimeout(resolve, 100));
			// A sixth user of the one connection gets it while the five wait (2 s), between their looks.
			const started = Date.now();
			expect(await small.query('SELECT 1 AS one')).toMatchObject({ rows: [{ one: 1 }] });
			expect(Date.now() - started).toBeLessThan(1_000);
			const answers = await Promise.all(waiters);
			expect(answers.map(([answer]) => answer.taken)).toEqual([false, false, false, false, false]);
		} finally {
			await small.end();
		}
	});

	it('leaves with no slot once Max Wait is up', async () => {
		const tables = fresh();
		await take(tables, request('a', 1));
		const started = Date.now();
		const [answer] = await takeSlots(pool, tables, [request('a', 1)], 200);
		expect(answer).toMatchObject({ taken: false });
		expect(Date.now() - started).toBeGreaterThanOrEqual(190);
	});
});
