/**
 * The inbox, through the nodes on real Postgres: Keep Event stores the delivery with its claim, Retry Later
 * makes it due after a backoff, Take Due Events takes due events over (never one event to two takers, nor
 * to a taker and the sender's own retry), Max Attempts parks a dead letter that List Stuck Claims shows and
 * Requeue puts back. Time is moved by moving the database's clock (databaseClock), the one the inbox reads.
 */
import type { IDataObject } from 'n8n-workflow';

import { webhookItem } from '../../harness/node/executeContext';
import { databaseClock } from '../support/databaseClock';
import { testPool, uniqueTableName } from '../support/database';
import {
	claim,
	delivery,
	inboxTables,
	keyOperation,
	retryLater,
	takeDue,
} from '../support/inboxNodes';

const admin = testPool(2);
afterAll(() => admin.end());

const { eventRows } = inboxTables(admin);
const clock = databaseClock();
/** Whatever is held or scheduled in the table is due: the clock passes its leases. */
const makeDue = (table: string) => clock.passLeasesOf(table);

describe('Keep Event', () => {
	it('keeps the raw bytes, the content type and the named headers with the claim; Complete drops them', async () => {
		const table = uniqueTableName('inbox');
		const item = delivery('evt_keep');
		const [[created]] = await claim([item], table);
		expect(await eventRows(table)).toEqual([
			{
				key: 'evt:evt_keep',
				attempts: 1,
				dead: false,
				last_error: null,
				content_type: 'application/json',
				// Only the header named; the signature is not kept.
				headers: { 'x-github-event': 'push' },
				body: '{"id":"evt_keep","type":"push","note":"café"}',
			},
		]);
		const [[done]] = await keyOperation('complete', [created], table);
		expect(done.json.idempotency).toMatchObject({ completed: true });
		expect(await eventRows(table)).toEqual([]);
	});

	it('a batch keeps each new key’s event in the same statement; a repeat within it keeps none twice', async () => {
		const table = uniqueTableName('inbox');
		const [created, repeats] = await claim(
			[delivery('evt_b1'), delivery('evt_b2'), delivery('evt_b1')],
			table,
		);
		expect(created).toHaveLength(2);
		expect(repeats).toHaveLength(1);
		expect((await eventRows(table)).map(({ key, attempts }) => ({ key, attempts }))).toEqual([
			{ key: 'evt:evt_b1', attempts: 1 },
			{ key: 'evt:evt_b2', attempts: 1 },
		]);
	});

	it('Release drops the kept event with its claim', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_rel')], table);
		await keyOperation('release', [created], table);
		expect(await eventRows(table)).toEqual([]);
		expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
	});

	it('an event past Max Event Size is refused naming its size, and nothing is claimed', async () => {
		const table = uniqueTableName('inbox');
		const big = webhookItem(JSON.stringify({ id: 'evt_big', pad: 'x'.repeat(2048) }));
		// Under "Continue (using error output)" the refused item leaves New holding only its error.
		const [[refused, claimed]] = await claim([big, delivery('evt_small')], table, {
			maxEventKib: 1,
		});
		expect(refused.json).toEqual({
			error: 'configuration',
			message:
				'Item 0: the event is 2.0 KiB, past Max Event Size (1 KiB); nothing was claimed: raise Max Event Size, or keep fewer headers',
		});
		expect(claimed.json.idempotency).toMatchObject({ key: 'evt:evt_small', isNew: true });
		const keys = (await admin.query(`SELECT key FROM ${table} ORDER BY key`)).rows;
		expect(keys).toEqual([{ key: 'evt:evt_small' }]);
	});

	it('without Keep Event no event table is made: a table that keeps no events costs what it did', async () => {
		const table = uniqueTableName('inbox');
		await claim([delivery('evt_plain')], table, { keepEvent: false });
		const { rows } = await admin.query('SELECT to_regclass($1) AS events', [`${table}_events`]);
		expect(rows[0].events).toBeNull();
		expect(await takeDue(table)).toEqual([[]]);
	});
});

describe('the event table beside a claim table', () => {
	it('another table named <claim table>_events (a claim table of its own) is never touched, and Keep Event is refused naming it', async () => {
		const table = uniqueTableName('inbox');
		const other = `${table}_events`;
		// Another workflow's claim table, named as this one's event table would be: before, Complete on
		// this table deleted the same key there, and that workflow ran its redelivery again.
		await claim([delivery('evt_shared')], other, { keepEvent: false });
		const [[created]] = await claim([delivery('evt_shared')], table, { keepEvent: false });
		const [[completed]] = await keyOperation('complete', [created], table);
		expect(completed.json.idempotency).toMatchObject({ completed: true });
		const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${other}`);
		expect(rows[0].n).toBe(1);
		const [[refused]] = await claim([delivery('evt_kept')], table);
		expect(refused.json.message).toContain(
			`public.${other} exists and is not an event table (it lacks key, attempts, dead_at or body)`,
		);
	});
});

describe('Retry Later and Take Due Events', () => {
	it('records the error and the attempt, is due after the backoff, and is taken then as the Webhook node would output it', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_retry')], table);
		const before = Date.now();
		const [[scheduled]] = await retryLater([created], table);
		expect(scheduled.json.idempotency).toMatchObject({
			operation: 'retryLater',
			status: 'scheduled',
			attempts: 1,
			lastError: 'the shipping API answered 502',
		});
		const dueAt = Date.parse((scheduled.json.idempotency as IDataObject).dueAt as string);
		expect(dueAt - before).toBeGreaterThan(55_000);
		expect(dueAt - before).toBeLessThan(65_000);
		// Not due yet: nothing to take, and the sender's retry is told it is in progress.
		expect(await takeDue(table)).toEqual([[]]);
		const [, [retry]] = await claim([delivery('evt_retry')], table);
		expect(retry.json.idempotency).toMatchObject({ duplicateKind: 'in_progress' });

		await makeDue(table);
		const [[taken]] = await takeDue(table);
		expect(taken.json).toMatchObject({
			headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
			params: {},
			query: {},
			body: { id: 'evt_retry', type: 'push', note: 'café' },
			idempotency: {
				key: 'evt:evt_retry',
				isNew: true,
				status: 'processing',
				source: 'inbox',
				attempts: 2,
				lastError: 'the shipping API answered 502',
			},
		});
		expect(Buffer.from(taken.binary!.data.data, 'base64').toString('utf8')).toBe(
			'{"id":"evt_retry","type":"push","note":"café"}',
		);
		// The taker holds the claim now: the first holder's claim ID no longer completes it.
		expect((taken.json.idempotency as IDataObject).claimId).not.toBe(
			(created.json.idempotency as IDataObject).claimId,
		);
		expect(await takeDue(table)).toEqual([[]]);
		const [[done]] = await keyOperation('complete', [taken], table);
		expect(done.json.idempotency).toMatchObject({ completed: true });
		expect(await eventRows(table)).toEqual([]);
	});

	it('a backoff whose Factor^(attempt − 1) passes what a float holds waits Cap, not a database error', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_far')], table);
		// Factor 4 at attempt 599: 4^598 overflows float8 (before, the statement failed).
		await admin.query(`UPDATE ${table}_events SET attempts = 599`);
		const before = Date.now();
		const [[scheduled]] = await retryLater([created], table, {
			maxAttempts: 1000,
			backoff: { baseSeconds: 30, factor: 4, capSeconds: 3600, jitter: 0 },
		});
		expect(scheduled.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 599 });
		const dueAt = Date.parse((scheduled.json.idempotency as IDataObject).dueAt as string);
		expect(dueAt - before).toBeGreaterThan(3_595_000);
		expect(dueAt - before).toBeLessThan(3_605_000);
	});

	it('a Base of 0 is due at once at any attempt, not a database error (before, 0 × Factor^(attempt − 1) overflowed)', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_zero')], table);
		await admin.query(`UPDATE ${table}_events SET attempts = 599`);
		const before = Date.now();
		const [[scheduled]] = await retryLater([created], table, {
			maxAttempts: 1000,
			backoff: { baseSeconds: 0, factor: 4, capSeconds: 3600, jitter: 0 },
		});
		expect(scheduled.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 599 });
		const dueAt = Date.parse((scheduled.json.idempotency as IDataObject).dueAt as string);
		expect(dueAt - before).toBeLessThan(5_000);
	});

	it('a lease, Base or Cap past a year is refused naming it, before any statement (before, a database error)', async () => {
		const table = uniqueTableName('inbox');
		const said = (run: Promise<unknown>) =>
			run.then(JSON.stringify, (error: Error) => error.message);
		const [[created]] = await claim([delivery('evt_year')], table);
		expect(await said(claim([delivery('evt_other')], table, { leaseSeconds: 1e300 }))).toContain(
			'Lease (Seconds) must be a number from 1 to 31536000, got 1e+300',
		);
		expect(await said(takeDue(table, { leaseSeconds: 1e300 }))).toContain(
			'Lease (Seconds) must be a number from 1 to 31536000, got 1e+300',
		);
		for (const [name, label] of [
			['baseSeconds', 'Base (Seconds)'],
			['capSeconds', 'Cap (Seconds)'],
		])
			expect(
				await said(retryLater([created], table, { backoff: { [name]: 1e300, jitter: 0 } })),
			).toContain(`${label} must be a number from 0 to 31536000, got 1e+300`);
	});

	it('an error text Postgres cannot hold (a NUL, a half of a surrogate pair at the cut) is recorded, not refused', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_nul')], table);
		// A business step's error can carry any bytes (a driver's message, a binary body): before, a NUL failed
		// Retry Later, so the error was never recorded (a dead letter without its reason) and the event waited
		// for its lease to end instead of the backoff.
		// NUL written as \0, then cut at 2,000 UTF-16 units: here inside the emoji, which goes whole.
		const errorMessage = `bad byte \u0000 in the reply; ${'x'.repeat(1_973)}😀`;
		const [[scheduled]] = await retryLater([created], table, { errorMessage });
		const { lastError } = scheduled.json.idempotency as IDataObject;
		expect(scheduled.json.idempotency).toMatchObject({ status: 'scheduled', attempts: 1 });
		expect(lastError).toBe(`bad byte \\0 in the reply; ${'x'.repeat(1_973)}`);
		expect((await eventRows(table))[0].last_error).toBe(lastError);
	});

	it('an execution that died (its lease ran out, no Complete, no Retry Later) is taken too', async () => {
		const table = uniqueTableName('inbox');
		await claim([delivery('evt_dead')], table);
		expect(await takeDue(table)).toEqual([[]]);
		await makeDue(table);
		const [[taken]] = await takeDue(table);
		expect(taken.json.idempotency).toMatchObject({ key: 'evt:evt_dead', attempts: 2 });
	});

	it('after Max Attempts the event is a dead letter: never taken, listed with its last error, kept by Purge, put back by Requeue', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_poison')], table);
		await retryLater([created], table, { maxAttempts: 2 });
		await makeDue(table);
		const [[second]] = await takeDue(table, { maxAttempts: 2 });
		const [[parked]] = await retryLater([second], table, {
			maxAttempts: 2,
			errorMessage: 'poison: cannot parse order',
		});
		expect(parked.json.idempotency).toMatchObject({ status: 'dead_letter', attempts: 2 });
		await makeDue(table);
		expect(await takeDue(table, { maxAttempts: 2 })).toEqual([[]]);
		// A sender's retry does not run it either: its lease never ends.
		const [, [retry]] = await claim([delivery('evt_poison')], table);
		expect(retry.json.idempotency).toMatchObject({
			duplicateKind: 'in_progress',
			leaseUntil: 'infinity',
		});
		// Nor is it waited for: a repeat with Wait for Running Claim answers at once (before: after 30 s).
		const asked = Date.now();
		const [, [waited]] = await claim([delivery('evt_poison')], table, { waitSeconds: 30 });
		expect(waited.json.idempotency).toMatchObject({ duplicateKind: 'in_progress' });
		expect(Date.now() - asked).toBeLessThan(10_000);

		const [listed] = await keyOperation('listStuck', [], table, { stuckAfterMinutes: 0 });
		expect(listed.map((item) => item.json)).toEqual([
			expect.objectContaining({
				kind: 'dead_letter',
				key: 'evt:evt_poison',
				attempts: 2,
				lastError: 'poison: cannot parse order',
			}),
		]);
		await clock.advance(90 * 86_400);
		await keyOperation('purge', [], table, { olderThanDays: 30 });
		expect(await eventRows(table)).toMatchObject([{ key: 'evt:evt_poison', dead: true }]);

		// The key twice in one batch: one dead letter, requeued once (before, both items said true).
		const poison = { json: { idempotency: { key: 'evt:evt_poison' } } };
		const [[requeued, twice]] = await keyOperation('requeue', [poison, poison], table);
		expect(requeued.json.idempotency).toEqual({
			key: 'evt:evt_poison',
			operation: 'requeue',
			requeued: true,
		});
		expect(twice.json.idempotency).toMatchObject({ requeued: false });
		const [[again]] = await takeDue(table, { maxAttempts: 2 });
		expect(again.json.idempotency).toMatchObject({ key: 'evt:evt_poison', attempts: 1 });
	});

	it('Requeue leaves a dead letter whose claim was completed (its drop failed after Complete): the work never runs again', async () => {
		const table = uniqueTableName('inbox');
		const [[created]] = await claim([delivery('evt_done')], table);
		await retryLater([created], table, { maxAttempts: 1 });
		// A Complete whose own drop of the event did not happen (a worker that did not know of the event
		// table, its second statement cut off): the claim is completed, the parked event left behind.
		await admin.query(`UPDATE ${table} SET lease_until = NULL, claim_token = NULL`);
		const [[requeued]] = await keyOperation(
			'requeue',
			[{ json: { idempotency: { key: 'evt:evt_done' } } }],
			table,
		);
		expect(requeued.json.idempotency).toMatchObject({ requeued: false });
		// Before, the completed claim was given a lease, so it was processing again and Take Due ran it.
		expect(await takeDue(table)).toEqual([[]]);
		const { rows } = await admin.query(`SELECT lease_until FROM ${table}`);
		expect(rows).toEqual([{ lease_until: null }]);
	});

	it('List Stuck Claims leaves out a claim whose kept event is due: Take Due Events runs it, no person need act', async () => {
		const table = uniqueTableName('inbox');
		await claim([delivery('evt_kept')], table);
		await claim([delivery('evt_plain')], table, { keepEvent: false });
		await makeDue(table);
		const [listed] = await keyOperation('listStuck', [], table, {
			stuckAfterMinutes: 0,
			includeSummary: true,
		});
		// Before, the kept event was reported stuck too, and the report's remedies (redeliver, or run the step
		// by hand and Complete) would run it a second time beside Take Due Events.
		expect(listed.map((item) => item.json)).toEqual([
			expect.objectContaining({ kind: 'summary', stuckClaims: 1 }),
			expect.objectContaining({ kind: 'stuck_claim', key: 'evt:evt_plain' }),
		]);
	});

	it('a run that died on its last attempt is parked by Take Due Events, not taken', async () => {
		const table = uniqueTableName('inbox');
		await claim([delivery('evt_last')], table);
		await makeDue(table);
		expect(await takeDue(table, { maxAttempts: 1 })).toEqual([[]]);
		expect(await eventRows(table)).toMatchObject([
			{ key: 'evt:evt_last', dead: true, last_error: expect.stringMatching(/execution died/) },
		]);
	});

	it('takes at most Max Events per run, the longest due first', async () => {
		const table = uniqueTableName('inbox');
		// Claimed a minute apart, b first: b's lease ends first, then c's, then a's.
		for (const id of ['b', 'c', 'a']) {
			await claim([delivery(`evt_${id}`)], table);
			await clock.advance(60);
		}
		await makeDue(table);
		const [first] = await takeDue(table, { maxEvents: 2 });
		expect(first.map((item) => (item.json.idempotency as IDataObject).key).sort()).toEqual([
			'evt:evt_b',
			'evt:evt_c',
		]);
		const [rest] = await takeDue(table, { maxEvents: 2 });
		expect(rest.map((item) => (item.json.idempotency as IDataObject).key)).toEqual(['evt:evt_a']);
	});
});

describe('one run per due event, whoever asks', () => {
	it('two Take Due Events runs and the senders’ own retries at the same moment: each event is run by exactly one of them', async () => {
		const table = uniqueTableName('inbox');
		const ids = Array.from({ length: 40 }, (_, i) => `evt_race_${i}`);
		for (let round = 0; round < 3; round++) {
			for (const id of ids) await claim([delivery(`${id}_${round}`)], table);
			await makeDue(table);
			const [takerA, takerB, ...retries] = await Promise.all([
				takeDue(table),
				takeDue(table),
				...ids.map((id) => claim([delivery(`${id}_${round}`)], table)),
			]);
			const runs = new Map<string, number>();
			const count = (key: unknown) => runs.set(key as string, (runs.get(key as string) ?? 0) + 1);
			for (const item of [...takerA[0], ...takerB[0]])
				count((item.json.idempotency as IDataObject).key);
			for (const [newItems] of retries)
				for (const item of newItems) count((item.json.idempotency as IDataObject).key);
			expect(runs.size).toBe(ids.length);
			expect([...runs.values()].every((n) => n === 1)).toBe(true);
			await admin.query(`UPDATE ${table} SET lease_until = NULL, claim_token = NULL`);
			await admin.query(`DELETE FROM ${table}_events`);
		}
	});
});
