/**
 * Check Rate's sliding window on real tables: at most R starts of a key in any window of W, whichever
 * instant it begins at; a limited attempt is told when the oldest counted start leaves the window; an
 * attempt sent twice starts once. Time is the database's clock, moved by the test.
 */
import { checkRates, type RateRequest } from '../../../nodes/Idempotency/store/limits/checkRates';
import { limitTables, withLimitTables } from '../../../nodes/Idempotency/store/limits/limitTables';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { testPool, uniqueTableName } from '../../support/database';
import { databaseClock } from '../../support/databaseClock';

const clock = databaseClock();
const pool = testPool(20);
afterAll(() => pool.end());

const fresh = () => limitTables(tableRef('public', uniqueTableName('limits')));
const attempt = (key: string, maxStarts = 3, windowMs = 10_000): RateRequest => ({
	key,
	maxStarts,
	windowMs,
	attemptId: newClaimId(),
});
const check = (tables: ReturnType<typeof fresh>, requests: RateRequest[]) =>
	withLimitTables(pool, tables, true, () => checkRates(pool, tables, requests));

describe('checkRates', () => {
	it('lets R start in a window, then tells the rest when the oldest start leaves it', async () => {
		const tables = fresh();
		const first = await check(tables, [attempt('a'), attempt('a')]);
		expect(first.map((answer) => answer.allowed)).toEqual([true, true]);
		await clock.advance(4);
		const [third, fourth] = await check(tables, [attempt('a'), attempt('a')]);
		expect(third.allowed).toBe(true);
		// The oldest start leaves 10 s after it was made: 6 s from now, rounded up.
		expect(fourth).toMatchObject({ allowed: false, retryAfterSeconds: 6 });
		expect((await check(tables, [attempt('b')]))[0].allowed).toBe(true);
		await clock.advance(6);
		// Both starts made at 0 s have left: two more start, beside the one made at 4 s.
		const [again, andAgain, limited] = await check(tables, [
			attempt('a'),
			attempt('a'),
			attempt('a'),
		]);
		expect([again.allowed, andAgain.allowed]).toEqual([true, true]);
		// The start made at 4 s is now the oldest of the three counted: it leaves in 4 s.
		expect(limited).toMatchObject({ allowed: false, retryAfterSeconds: 4 });
	});

	it('starts an attempt sent twice once', async () => {
		const tables = fresh();
		const once = attempt('a', 2);
		expect((await check(tables, [once, once])).map((answer) => answer.allowed)).toEqual([
			true,
			true,
		]);
		expect((await check(tables, [attempt('a', 2)]))[0].allowed).toBe(true);
		expect((await check(tables, [attempt('a', 2)]))[0].allowed).toBe(false);
	});

	it('answers an attempt sent again with the time it started, not the time it was sent again', async () => {
		const tables = fresh();
		const once = attempt('a', 2);
		const [first] = await check(tables, [once]);
		await clock.advance(3);
		const [again] = await check(tables, [once]);
		expect(again).toEqual(first);
	});

	it('keeps at most R starts in every window, and lets R through per window while demand exceeds it', async () => {
		const tables = fresh();
		await check(tables, [attempt('warm')]);
		const keys = ['a', 'b', 'c'];
		const starts = new Map<string, number[]>(keys.map((key) => [key, []]));
		const perStep: Record<string, number[]> = { a: [], b: [], c: [] };
		// Eight steps 10 s apart on the database's clock, each with 30 attempts at once on each of 3 keys:
		// demand far above R = 5 per 20 s. A step's start is 10 s after the last step ended (a step may take
		// up to about 5 s of real time on a loaded machine and the pattern below still holds).
		for (let step = 0; step < 8; step++) {
			const requests = keys.flatMap((key) =>
				Array.from({ length: 30 }, () => attempt(key, 5, 20_000)),
			);
			const answers = await Promise.all(
				requests.map((request) => checkRates(pool, tables, [request]).then(([answer]) => answer)),
			);
			for (const key of keys) perStep[key].push(0);
			answers.forEach((answer, i) => {
				const key = requests[i].key;
				if (!answer.allowed) {
					expect(answer.retryAfterSeconds).toBeGreaterThanOrEqual(1);
					expect(answer.retryAfterSeconds).toBeLessThanOrEqual(20);
					return;
				}
				perStep[key][step]++;
				starts.get(key)!.push(answer.startedAt.getTime());
			});
			await clock.advance(10);
		}
		for (const key of keys) {
			const times = starts.get(key)!.sort((x, y) => x - y);
			// Every window of 20 s that begins at a start holds at most 5 (a window holding most begins at one).
			for (const from of times)
				expect(times.filter((t) => t >= from && t < from + 20_000).length).toBeLessThanOrEqual(5);
			// Each step 20 s after the last group finds it gone and lets 5 through; the step between, none.
			expect(perStep[key]).toEqual([5, 0, 5, 0, 5, 0, 5, 0]);
		}
	});
});
