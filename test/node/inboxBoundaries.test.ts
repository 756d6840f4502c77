/**
 * Where the inbox must stop, through the nodes on real Postgres: Purge keeps every event still to run,
 * Take Due Events takes only its own scope, a lost answer costs no run, a rerun gets the item the first
 * run got (or the event is parked, loudly), Max Attempts bounds runs whoever starts them, and a worker
 * whose picture of the table is stale still drops the events it settles.
 */
import type { IDataObject } from 'n8n-workflow';

import { webhookItem } from '../../harness/node/executeContext';
import { answerDroppingProxyForSuite } from '../../harness/proxy/answerDroppingProxy';
import { databaseClock } from '../support/databaseClock';
import { waitFor } from '../support/waitFor';
import { testCredentials, testDatabaseUrl, testPool, uniqueTableName } from '../support/database';
import {
	claim,
	delivery,
	inboxTables,
	keyOperation,
	keysOf,
	retryLater,
	takeDue,
} from '../support/inboxNodes';

const admin = testPool(2);
afterAll(() => admin.end());

const { eventRows } = inboxTables(admin);
const clock = databaseClock();
/** Whatever is held or scheduled in the table is due: the clock passes its leases. */
const makeDue = (table: string) => clock.passLeasesOf(table);
const DAY = 86_400;
const idempotency = (item: { json: IDataObject }) => item.json.idempotency as IDataObject;

describe('Purge keeps every event that is still to run', () => {
	it('a requeued dead letter, a scheduled event whose backoff passed and a dead holder’s event stay; only finished work goes', async () => {
		const table = uniqueTableName('purge_inbox');
		const [[poison]] = await claim([delivery('evt_requeued')], table);
		await retryLater([poison], table, { maxAttempts: 1 });
		await keyOperation('requeue', [poison], table);
		const [[failed]] = await claim([delivery('evt_scheduled')], table);
		await retryLater([failed], table);
		await claim([delivery('evt_died')], table);
		const [[done]] = await claim([delivery('evt_done')], table);
		await keyOperation('complete', [done], table);
		await makeDue(table);
		await clock.advance(40 * DAY);

		const [[purged]] = await keyOperation('purge', [], table, { olderThanDays: 30 });
		// Before: `deleted 4`, and the next Take Due returned nothing.
		expect(purged.json).toMatchObject({ deleted: 1 });
		const [taken] = await takeDue(table);
		expect(keysOf(taken).sort()).toEqual(['evt:evt_died', 'evt:evt_requeued', 'evt:evt_scheduled']);
	});

	it('dead letters go only when asked, and only those parked before the cutoff', async () => {
		const table = uniqueTableName('purge_dead');
		// Both first seen 40 days ago; one parked 35 days ago, the other today.
		await clock.advance(-40 * DAY);
		const [[oldDead]] = await claim([delivery('evt_old_dead')], table);
		const [[newDead]] = await claim([delivery('evt_new_dead')], table);
		await clock.advance(5 * DAY);
		await retryLater([oldDead], table, { maxAttempts: 1 });
		await clock.advance(35 * DAY);
		await retryLater([newDead], table, { maxAttempts: 1 });
		const [[kept]] = await keyOperation('purge', [], table, { olderThanDays: 30 });
		expect(kept.json).toMatchObject({ deleted: 0 });
		// A cutoff before the first timestamp Postgres holds is refused naming it (before, a database error).
		await expect(
			keyOperation('purge', [], table, { olderThanDays: 1e7, includeDeadLetters: true }),
		).rejects.toThrow('Older Than (Days) must be a number from 0 to 36500, got 10000000');
		await expect(
			keyOperation('listStuck', [], table, { stuckAfterMinutes: 1e300 }),
		).rejects.toThrow(
			'First Seen More Than (Minutes) Ago must be a number from 0 to 52560000, got 1e+300',
		);
		// A value that is no switch is refused, not read as off (before, "yes" purged as if unasked).
		await expect(
			keyOperation('purge', [], table, { olderThanDays: 30, includeDeadLetters: 'yes' }),
		).rejects.toThrow('Delete Old Dead Letters must be true or false, got "yes"');
		// Text from an expression is read as written.
		const [[purged]] = await keyOperation('purge', [], table, {
			olderThanDays: 30,
			includeDeadLetters: 'true',
		});
		expect(purged.json).toMatchObject({ deleted: 1, includeDeadLetters: true });
		expect((await eventRows(table)).map((row) => row.key)).toEqual(['evt:evt_new_dead']);
		const { rows } = await admin.query(`SELECT key FROM ${table}`);
		expect(rows).toEqual([{ key: 'evt:evt_new_dead' }]);
	});

	it('a dead letter requeued while Purge deletes old dead letters stays, with its event', async () => {
		const table = uniqueTableName('purge_race');
		await clock.advance(-40 * DAY);
		const [[older]] = await claim([delivery('evt_race_older')], table);
		await clock.advance(60);
		const [[requeued]] = await claim([delivery('evt_race_requeued')], table);
		await clock.advance(5 * DAY);
		await retryLater([older, requeued], table, { maxAttempts: 1 });
		await clock.advance(35 * DAY);
		// Purge's delete of the older dead letter sleeps: its snapshot is taken, the other row not yet locked.
		await admin.query(`CREATE FUNCTION ${table}_slow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN PERFORM pg_sleep(2); RETURN OLD; END $$`);
		await admin.query(
			`CREATE TRIGGER slow BEFORE DELETE ON ${table} FOR EACH ROW WHEN (OLD.key = 'evt:evt_race_older') EXECUTE FUNCTION ${table}_slow()`,
		);
		const purging = keyOperation('purge', [], table, {
			olderThanDays: 30,
			includeDeadLetters: true,
		});
		let purged = false;
		void purging.then(() => (purged = true));
		await untilPurgeSleeps(table);
		const [[back]] = await keyOperation('requeue', [requeued], table);
		expect(idempotency(back)).toMatchObject({ requeued: true });
		// The requeue committed while Purge was still running, before it locked that dead letter.
		expect(purged).toBe(false);

		const [[purge]] = await purging;
		// Purge re-checks the row it locks as the requeue left it, not as its snapshot showed it.
		expect(purge.json).toMatchObject({ deleted: 1 });
		const [taken] = await takeDue(table);
		expect(keysOf(taken)).toEqual(['evt:evt_race_requeued']);
	});

	it('Clear Deduplication History keeps a scope’s events still in flight too', async () => {
		const table = uniqueTableName('clear_inbox');
		await claim([delivery('evt_waiting')], table, { options: { table, scope: 'shop' } });
		await makeDue(table);
		const [[cleared]] = await keyOperation('clearHistory', [], table, { clearScope: 'shop' });
		expect(cleared.json.idempotency).toMatchObject({ deletedKeys: 0 });
		const [taken] = await takeDue(table, { scope: 'shop' });
		expect(keysOf(taken)).toEqual(['shop:evt:evt_waiting']);
	});
});

describe('Take Due Events takes only its own scope', () => {
	it('each scope, and no scope, takes only its own events', async () => {
		const table = uniqueTableName('scoped');
		await claim([delivery('evt_1')], table, { options: { table, scope: 'shop' } });
		await claim([delivery('evt_2')], table, { options: { table, scope: 'ci' } });
		await claim([delivery('evt_3')], table);
		await makeDue(table);
		// Before: Scope shop returned shop:evt_1 and ci:evt_2 (and evt_3).
		expect(keysOf((await takeDue(table, { scope: 'shop' }))[0])).toEqual(['shop:evt:evt_1']);
		expect(keysOf((await takeDue(table))[0])).toEqual(['evt:evt_3']);
		expect(keysOf((await takeDue(table, { scope: 'ci' }))[0])).toEqual(['ci:evt:evt_2']);
	});

	it('an event table made before events had a scope is given the column by the claim node', async () => {
		const table = uniqueTableName('oldevents');
		await admin.query(`CREATE TABLE ${table}_events (received_at timestamptz NOT NULL DEFAULT now(),
			dead_at timestamptz, attempts integer NOT NULL DEFAULT 1, key text PRIMARY KEY, content_type text,
			last_error text, headers json, body bytea NOT NULL)`);
		await claim([delivery('evt_1')], table, { options: { table, scope: 'shop' } });
		await makeDue(table);
		expect(keysOf((await takeDue(table, { scope: 'shop' }))[0])).toEqual(['shop:evt:evt_1']);
	});

	it('a reserved scope is refused, naming it', async () => {
		const table = uniqueTableName('reserved');
		await expect(takeDue(table, { scope: 'burst' })).rejects.toThrow(
			/Scope "burst" is refused: Idempotency Burst's Item-ID claims start with "burst:" too/,
		);
		const [[refused]] = await claim([delivery('evt_1')], table, {
			options: { table, scope: 'evt' },
		});
		expect(refused.json).toMatchObject({
			error: 'configuration',
			message: expect.stringMatching(/^Item 0: Scope "evt" is refused/),
		});
	});
});

describe('a lost answer costs no run', () => {
	const suite = answerDroppingProxyForSuite(testDatabaseUrl);
	const throughProxy = suite.credentials;

	it('a Keep Event claim whose answer was lost after its commit is this delivery’s, on its first run', async () => {
		const table = uniqueTableName('lostclaim');
		const id = `evt_lost_${table}`;
		suite.proxy().dropAnswerTo(id);
		const dropped = suite.proxy().dropped;
		const [[created]] = await claim([delivery(id)], table, {}, throughProxy());
		expect(suite.proxy().dropped).toBe(dropped + 1);
		expect(idempotency(created)).toMatchObject({ isNew: true });
		// Before: attempts 2, and with Max Attempts 2 the event was parked without its second run.
		expect(await eventRows(table)).toMatchObject([{ key: `evt:${id}`, attempts: 1 }]);
	});

	it('Take Due Events whose answer was lost after its commit returns the events it took, counted once', async () => {
		const table = uniqueTableName('losttake');
		// The table's picture is cached for the proxy's pool first, so the take is the one statement sent.
		await claim([delivery('evt_taken')], table, {}, throughProxy());
		await makeDue(table);
		suite.proxy().dropAnswerTo('SKIP LOCKED');
		const dropped = suite.proxy().dropped;
		const [taken] = await keyOperation(
			'takeDue',
			[],
			table,
			{ maxEvents: 100, leaseSeconds: 300, maxAttempts: 2 },
			throughProxy(),
		);
		expect(suite.proxy().dropped).toBe(dropped + 1);
		// Before: nothing came back; the event waited out the lease with an attempt used, then was parked unrun.
		expect(taken.map((item) => idempotency(item))).toMatchObject([
			{ key: 'evt:evt_taken', attempts: 2 },
		]);
		expect(await eventRows(table)).toMatchObject([{ attempts: 2, dead: false }]);
		const [[done]] = await keyOperation('complete', taken, table);
		expect(idempotency(done)).toMatchObject({ completed: true });
	});
});

describe('a rerun gets the item the first run got', () => {
	it('a JSON body naming a key twice is read as the Webhook node read it: the last value counts', async () => {
		const table = uniqueTableName('twice');
		const raw = '{"order":"o-1","amount":1,"amount":2}';
		const [[created]] = await claim([webhookItem(raw)], table, {
			keySource: 'expression',
			keyExpression: 'order-o-1',
		});
		expect(created.json.body).toEqual({ order: 'o-1', amount: 2 });
		await makeDue(table);
		const [[taken]] = await takeDue(table);
		// Before: {} (the raw bytes intact in binary data).
		expect(taken.json.body).toEqual({ order: 'o-1', amount: 2 });
		expect(Buffer.from(taken.binary!.data.data, 'base64').toString('utf8')).toBe(raw);
	});

	it('a form is read as n8n reads one', async () => {
		const table = uniqueTableName('form');
		const item = webhookItem('order=o-2&tag=a&tag=b', {
			'content-type': 'application/x-www-form-urlencoded',
		});
		item.json.body = { order: 'o-2', tag: ['a', 'b'] };
		await claim([item], table, { keySource: 'expression', keyExpression: 'order-key' });
		await makeDue(table);
		const [[taken]] = await takeDue(table);
		expect(taken.json.body).toEqual({ order: 'o-2', tag: ['a', 'b'] });
	});

	it('a body it cannot read as the Webhook node did is parked as a dead letter saying why, never run on {}', async () => {
		const table = uniqueTableName('xml');
		const item = webhookItem('<order id="o-3"/>', { 'content-type': 'application/xml' });
		item.json.body = { order: { $: { id: 'o-3' } } };
		await claim([item], table, { keySource: 'expression', keyExpression: 'order-o-3' });
		await makeDue(table);
		expect(await takeDue(table)).toEqual([[]]);
		expect(await eventRows(table)).toMatchObject([
			{
				key: 'order-o-3',
				dead: true,
				last_error: expect.stringContaining(
					'Take Due Events: its item cannot be rebuilt as the Webhook node gave it: Content-Type application/xml',
				),
			},
		]);
		const [listed] = await keyOperation('listStuck', [], table, { stuckAfterMinutes: 0 });
		expect(listed.map((row) => row.json)).toMatchObject([
			{ kind: 'dead_letter', key: 'order-o-3' },
		]);
	});
});

describe('Max Attempts bounds runs, whoever starts them', () => {
	it('with Max Attempts 2 and every run dying, six sender retries give two runs; the event is parked', async () => {
		const table = uniqueTableName('bounded');
		let runs = 0;
		for (let delivered = 0; delivered < 7; delivered++) {
			const [newItems, repeats] = await claim([delivery('evt_dies')], table, { maxAttempts: 2 });
			runs += newItems.length;
			if (repeats.length > 0)
				expect(idempotency(repeats[0])).toMatchObject({ duplicateKind: 'in_progress' });
			// Each run dies: its lease ends without Complete or Retry Later.
			await makeDue(table);
		}
		// Before: 7 runs.
		expect(runs).toBe(2);
		expect(await eventRows(table)).toMatchObject([
			{
				key: 'evt:evt_dies',
				attempts: 2,
				dead: true,
				last_error: expect.stringMatching(/execution died/),
			},
		]);
		const { rows } = await admin.query(`SELECT lease_until = 'infinity' AS parked FROM ${table}`);
		expect(rows).toEqual([{ parked: true }]);
		expect(await takeDue(table, { maxAttempts: 2 })).toEqual([[]]);
	});
});

describe('a worker whose picture of the table is stale', () => {
	it('Release by a worker that has not seen the event table yet still drops the event', async () => {
		const table = uniqueTableName('stale');
		const staleWorker = testCredentials({ maxConnections: 3 });
		// The stale worker pictures the table before any event table exists.
		await claim([delivery('evt_other')], table, { keepEvent: false }, staleWorker);
		const [[created]] = await claim([delivery('evt_kept')], table);
		expect(await eventRows(table)).toHaveLength(1);
		const [[released]] = await keyOperation('release', [created], table, {}, staleWorker);
		expect(idempotency(released)).toMatchObject({ released: true });
		// Before: the row stayed, with its body (personal data Release promises to drop).
		expect(await eventRows(table)).toEqual([]);
	});

	it('a new claim replaces an event row its key left behind: the delivery that runs is the new one', async () => {
		const table = uniqueTableName('leftover');
		await claim([delivery('evt_seed')], table);
		await admin.query(
			`INSERT INTO ${table}_events (key, content_type, body, attempts, last_error) ` +
				`VALUES ('evt:evt_again', 'application/json', convert_to('{"id":"evt_again","old":true}', 'UTF8'), 3, 'old')`,
		);
		await claim([delivery('evt_again')], table);
		expect((await eventRows(table)).find((row) => row.key === 'evt:evt_again')).toMatchObject({
			attempts: 1,
			last_error: null,
			body: '{"id":"evt_again","type":"push","note":"café"}',
		});
	});
});

/** Until a statement on `table` sleeps in pg_sleep (its trigger). */
const untilPurgeSleeps = (table: string) =>
	waitFor(
		async () =>
			(
				await admin.query(
					"SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%' || $1 || '%'",
					[table],
				)
			).rows.length > 0,
		15_000,
		'Purge reaching the sleeping delete',
	);
