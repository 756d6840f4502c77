/**
 * Retry Later with the delay given per item (Check Rate's retryAfterSeconds) and a run that does not count
 * as an attempt: what a rate-limited retry path needs, so a kept event waits for its window, however many
 * times it is limited, and is never parked for it. Real Postgres; time moved by the database's clock.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { databaseClock } from '../support/databaseClock';
import { testPool, uniqueTableName } from '../support/database';
import { claim, delivery, inboxTables, retryLater, takeDue } from '../support/inboxNodes';

const admin = testPool(2);
afterAll(() => admin.end());

const { eventRows } = inboxTables(admin);
const clock = databaseClock();

/** A claimed item as Check Rate's Limited output leaves it. */
const limited = (item: INodeExecutionData, retryAfterSeconds: unknown): INodeExecutionData => ({
	...item,
	json: {
		...item.json,
		idempotency: {
			...(item.json.idempotency as IDataObject),
			rate: { allowed: false, retryAfterSeconds },
		},
	},
});

const perItemDelay = { delay: 'perItem', countAttempt: false, errorMessage: 'rate limited' };
const dueIn = (item: INodeExecutionData, from: number) =>
	Date.parse((item.json.idempotency as IDataObject).dueAt as string) - from;

describe('Retry Later, delay given per item', () => {
	it('each event is due after its own item’s seconds, with no jitter and no backoff', async () => {
		const table = uniqueTableName('ratedelay');
		const [created] = await claim([delivery('evt_d1'), delivery('evt_d2')], table);
		const before = Date.now();
		const [[soon, later]] = await retryLater(
			[limited(created[0], 3), limited(created[1], 120)],
			table,
			perItemDelay,
		);
		expect(soon.json.idempotency).toMatchObject({ status: 'scheduled', lastError: 'rate limited' });
		expect(dueIn(soon, before)).toBeGreaterThan(2_000);
		expect(dueIn(soon, before)).toBeLessThan(5_000);
		expect(dueIn(later, before)).toBeGreaterThan(119_000);
		expect(dueIn(later, before)).toBeLessThan(122_000);
		// Only the first is due once its 3 s have passed.
		await clock.advance(10);
		const [taken] = await takeDue(table);
		expect(taken.map((item) => (item.json.idempotency as IDataObject).key)).toEqual(['evt:evt_d1']);
	});

	it('an item whose delay is not a number of seconds stops the node naming the item, before any statement', async () => {
		const table = uniqueTableName('ratedelay');
		const [created] = await claim([delivery('evt_ok'), delivery('evt_bad')], table);
		for (const [bad, shown] of [
			['soon', '"soon"'],
			[-1, '-1'],
			[null, 'null'],
		])
			await expect(
				retryLater([limited(created[0], 5), limited(created[1], bad)], table, perItemDelay),
			).rejects.toThrow(
				`Item 1: Delay (Seconds) must be a number from 0 to 31536000, got ${shown}`,
			);
		// Neither event was touched: both still held, no error recorded.
		expect((await eventRows(table)).map(({ key, last_error }) => ({ key, last_error }))).toEqual([
			{ key: 'evt:evt_bad', last_error: null },
			{ key: 'evt:evt_ok', last_error: null },
		]);
	});
});

describe('Retry Later, not counted as an attempt', () => {
	it('an event limited more times than Max Attempts is never parked, and runs with its attempts intact', async () => {
		const table = uniqueTableName('ratedelay');
		const maxAttempts = 2;
		let [[held]] = await claim([delivery('evt_waits')], table);
		// Limited five times in a row: the claim's and each take's attempt is given back.
		for (let limitedRun = 0; limitedRun < 5; limitedRun++) {
			const [[scheduled]] = await retryLater([limited(held, 1)], table, {
				...perItemDelay,
				maxAttempts,
			});
			expect(scheduled.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 0 });
			await clock.advance(2);
			[[held]] = await takeDue(table, { maxAttempts });
			expect(held.json.idempotency).toMatchObject({ key: 'evt:evt_waits', attempts: 1 });
		}
		// A real failure still counts, and parks it at Max Attempts as before.
		const [[failed]] = await retryLater([held], table, { maxAttempts });
		expect(failed.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 1 });
		await clock.passLeasesOf(table);
		const [[last]] = await takeDue(table, { maxAttempts });
		const [[parked]] = await retryLater([last], table, { maxAttempts });
		expect(parked.json.idempotency).toMatchObject({ status: 'dead_letter', attempts: 2 });
	});

	it('the same event twice in one batch gives its take’s attempt back once, not twice', async () => {
		const table = uniqueTableName('ratedelay');
		const [[created]] = await claim([delivery('evt_twice')], table);
		// The first run died: its attempt counts, and Take Due Events counts the second.
		await clock.passLeasesOf(table);
		const [[taken]] = await takeDue(table);
		expect(taken.json.idempotency).toMatchObject({ attempts: 2 });
		// The old holder's item first (not held), then the holder's item twice.
		const [[stale, first, again]] = await retryLater(
			[limited(created, 5), limited(taken, 5), limited(taken, 5)],
			table,
			perItemDelay,
		);
		expect(stale.json.idempotency).toMatchObject({ status: 'not_held' });
		expect(first.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 1 });
		// Before, the repeat gave back the died run's attempt too (0): one more run than Max Attempts allows.
		expect(again.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 1 });
		expect(await eventRows(table)).toMatchObject([{ key: 'evt:evt_twice', attempts: 1 }]);
	});

	it('Count as an Attempt given as text by an expression is read as written; another value is refused', async () => {
		const table = uniqueTableName('ratedelay');
		const [[created]] = await claim([delivery('evt_text')], table);
		// Before, "false" was not `false`: the run counted, and at Max Attempts a rate limit parked the event.
		const [[scheduled]] = await retryLater([limited(created, 5)], table, {
			...perItemDelay,
			countAttempt: 'false',
			maxAttempts: 1,
		});
		expect(scheduled.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 0 });
		await expect(
			retryLater([limited(created, 5)], table, { ...perItemDelay, countAttempt: 'no' }),
		).rejects.toThrow('Count as an Attempt must be true or false, got "no"');
	});
});
