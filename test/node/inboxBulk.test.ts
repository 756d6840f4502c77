/**
 * Requeue Kept Events and Discard Kept Events through the Idempotency Key node on real Postgres: every dead
 * letter (or due event) a filter matches, in batches, with a Dry Run that only counts; never an event that
 * runs; and, against Take Due Events running at the same moment, each event run once and none lost. Time
 * is moved by moving the database's clock (databaseClock); the filters' test sets exact times on one event.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';
import { databaseClock } from '../support/databaseClock';
import { keyOperation } from '../support/inboxNodes';

const admin = testPool(2);
afterAll(() => admin.end());

const clock = databaseClock();

const claimNode = new IdempotencyClaim();

const delivery = (id: string) => webhookItem(JSON.stringify({ id, type: 'push' }));

/** Claim With Lease keeping each event, in one execution; returns the New items. */
async function keep(table: string, ids: string[], scope?: string): Promise<INodeExecutionData[]> {
	const [created] = await claimNode.execute.call(
		executeContext(ids.map(delivery), {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: 300,
				keepEvent: true,
				options: { table, ...(scope ? { scope } : {}) },
			},
			credentials: testCredentials(),
		}),
	);
	return created;
}

const retryLater = (
	items: INodeExecutionData[],
	table: string,
	maxAttempts: number,
	error: string,
) =>
	keyOperation('retryLater', items, table, {
		errorMessage: error,
		maxAttempts,
		backoff: { baseSeconds: 600, jitter: 0 },
	});
/** Dead letters: Retry Later on their first (and last) allowed attempt. */
const park = (
	items: INodeExecutionData[],
	table: string,
	error = 'the shipping API answered 502',
) => retryLater(items, table, 1, error);
/** Whatever is held or scheduled in the table is due: the clock passes its leases (a parked one never ends). */
const makeDue = (table: string) => clock.passLeasesOf(table);
const keysOf = (items: INodeExecutionData[]) =>
	items.map((item) => (item.json.idempotency as IDataObject).key as string);

const bulk = (operation: string, table: string, parameters: IDataObject = {}) =>
	keyOperation(operation, [], table, parameters).then(([[out]]) => out.json);
const takeDue = (table: string, maxEvents = 100) =>
	keyOperation('takeDue', [], table, { maxEvents, leaseSeconds: 300, maxAttempts: 8 }).then(
		([taken]) => taken,
	);

/** Each kept event's row, by key: attempts, parked, and its claim's state. */
async function inbox(table: string) {
	const { rows } = await admin.query(
		`SELECT c.key, v.attempts, v.dead_at IS NOT NULL AS dead, v.key IS NOT NULL AS kept,
		        CASE WHEN c.lease_until IS NULL THEN 'completed' WHEN c.lease_until = 'infinity' THEN 'parked'
		             WHEN c.lease_until <= now() THEN 'due' ELSE 'held' END AS claim
		 FROM ${table} AS c LEFT JOIN ${table}_events AS v ON v.key = c.key ORDER BY c.key`,
	);
	return Object.fromEntries(rows.map(({ key, ...rest }) => [key, rest]));
}

describe('Requeue Kept Events', () => {
	it('puts every dead letter back in line in batches, due at once with attempts counted afresh; nothing else moves', async () => {
		const table = uniqueTableName('bulk');
		const dead = await keep(table, ['d1', 'd2', 'd3', 'd4', 'd5']);
		await park(dead, table);
		await keep(table, ['due']);
		await makeDue(table);
		const scheduled = await keep(table, ['sched']);
		await keep(table, ['run']);
		await retryLater(scheduled, table, 8, 'timeout');

		expect(await bulk('requeueEvents', table, { dryRun: true })).toEqual({
			operation: 'requeueEvents',
			table: `public.${table}`,
			events: 'dead',
			dryRun: true,
			matched: 5,
		});
		expect((await inbox(table))['evt:d1']).toEqual({
			attempts: 1,
			dead: true,
			kept: true,
			claim: 'parked',
		});
		expect(await bulk('requeueEvents', table, { batchSize: 2 })).toEqual({
			operation: 'requeueEvents',
			table: `public.${table}`,
			events: 'dead',
			dryRun: false,
			requeued: 5,
			batches: 3,
		});
		const after = await inbox(table);
		for (const key of keysOf(dead))
			expect({ key, ...after[key] }).toEqual({
				key,
				attempts: 0,
				dead: false,
				kept: true,
				claim: 'due',
			});
		expect(after['evt:due']).toMatchObject({ attempts: 1, claim: 'due' });
		expect(after['evt:sched']).toMatchObject({ attempts: 1, claim: 'held' });
		expect(after['evt:run']).toMatchObject({ attempts: 1, claim: 'held' });
		// Taken again as attempt 1 of Max Attempts.
		const taken = await takeDue(table);
		expect(
			Object.fromEntries(
				taken.map((item) => {
					const { key, attempts } = item.json.idempotency as IDataObject;
					return [key, attempts];
				}),
			),
		).toEqual({
			'evt:d1': 1,
			'evt:d2': 1,
			'evt:d3': 1,
			'evt:d4': 1,
			'evt:d5': 1,
			'evt:due': 2,
		});
		expect(await bulk('requeueEvents', table)).toMatchObject({ requeued: 0, batches: 1 });
	});

	it('due events too, on request, with their attempts counted afresh; a running or scheduled event never', async () => {
		const table = uniqueTableName('bulk');
		const [dead, due] = [await keep(table, ['dead']), await keep(table, ['due'])];
		await park(dead, table);
		await retryLater(due, table, 8, 'timeout');
		await makeDue(table);
		const scheduled = await keep(table, ['sched']);
		await keep(table, ['run']);
		await retryLater(scheduled, table, 8, 'timeout');
		expect(await bulk('requeueEvents', table, { eventState: 'due' })).toMatchObject({
			events: 'due',
			requeued: 1,
		});
		expect(await inbox(table)).toMatchObject({
			'evt:dead': { dead: true, claim: 'parked' },
			'evt:due': { attempts: 0, claim: 'due' },
			'evt:sched': { attempts: 1, claim: 'held' },
			'evt:run': { attempts: 1, claim: 'held' },
		});
		expect(await bulk('requeueEvents', table, { eventState: 'deadOrDue' })).toMatchObject({
			requeued: 2,
		});
		expect(keysOf(await takeDue(table)).sort()).toEqual(['evt:dead', 'evt:due']);
	});
});

describe('Discard Kept Events', () => {
	it('drops each matching event and completes its claim: never run, a redelivery is a duplicate', async () => {
		const table = uniqueTableName('bulk');
		const dead = await keep(table, ['dead1', 'dead2']);
		await keep(table, ['due']);
		await park(dead, table);
		await makeDue(table);
		const running = await keep(table, ['run']);
		expect(await bulk('discardEvents', table, { eventState: 'deadOrDue', batchSize: 1 })).toEqual({
			operation: 'discardEvents',
			table: `public.${table}`,
			events: 'deadOrDue',
			dryRun: false,
			discarded: 3,
			batches: 4,
		});
		expect(await inbox(table)).toEqual({
			'evt:dead1': { attempts: null, dead: false, kept: false, claim: 'completed' },
			'evt:dead2': { attempts: null, dead: false, kept: false, claim: 'completed' },
			'evt:due': { attempts: null, dead: false, kept: false, claim: 'completed' },
			'evt:run': { attempts: 1, dead: false, kept: true, claim: 'held' },
		});
		expect(await takeDue(table)).toEqual([]);
		const [created, duplicates] = await claimNode.execute.call(
			executeContext([delivery('dead1'), delivery('due')], {
				parameters: {
					keySource: 'auto',
					claimMode: 'lease',
					keepEvent: true,
					options: { table },
				},
				credentials: testCredentials(),
			}),
		);
		expect(created).toEqual([]);
		expect(duplicates.map((item) => item.json.idempotency)).toEqual([
			expect.objectContaining({ key: 'evt:dead1', status: 'completed' }),
			expect.objectContaining({ key: 'evt:due', status: 'completed' }),
		]);
		// The running event's holder still completes it.
		const [[done]] = await keyOperation('complete', running, table);
		expect(done.json.idempotency).toMatchObject({ completed: true });
	});

	it('a Dry Run an expression gives as text is read as written; another value is refused, never run for real', async () => {
		const table = uniqueTableName('bulk');
		await park(await keep(table, ['t1']), table);
		// `{{ $json.query.dryRun }}` from a webhook's query string is text: before, "true" was not `true`, so the
		// discard ran for real.
		expect(await bulk('discardEvents', table, { dryRun: 'true' })).toMatchObject({
			dryRun: true,
			matched: 1,
		});
		expect(
			await bulk('discardEvents', table, { dryRun: 'yes' }).then(
				JSON.stringify,
				(e: Error) => e.message,
			),
		).toBe('Dry Run must be true or false, got "yes"');
		expect((await inbox(table))['evt:t1']).toMatchObject({ dead: true });
	});

	it('a table in the original layout (status text) is completed there too', async () => {
		const table = uniqueTableName('original');
		await admin.query(
			`CREATE TABLE ${table} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz,
			 deliveries integer NOT NULL DEFAULT 1, status text NOT NULL DEFAULT 'completed', lease_until timestamptz,
			 claim_token text, fingerprint text)`,
		);
		const dead = await keep(table, ['orig']);
		await park(dead, table);
		expect(await bulk('discardEvents', table)).toMatchObject({ discarded: 1 });
		const { rows } = await admin.query(`SELECT status, lease_until, claim_token FROM ${table}`);
		expect(rows).toEqual([{ status: 'completed', lease_until: null, claim_token: null }]);
	});
});

describe('filters', () => {
	it('scope (the claim node’s, as recorded: _ and % are plain), times, error text (any case, not a pattern) and attempts', async () => {
		const table = uniqueTableName('bulk');
		const unscoped = await keep(table, ['u1', 'u2']);
		const scoped = await keep(table, ['s1', 's2'], 'or_ders');
		const lookalike = await keep(table, ['x1'], 'orxders');
		await park(unscoped.slice(0, 1), table, 'Timeout after 30 s');
		await park(unscoped.slice(1), table, 'invalid payload');
		await park(scoped, table, 'HTTP 502: 100% of retries failed');
		await park(lookalike, table, 'timeout');
		await admin.query(
			`UPDATE ${table}_events SET dead_at = '2026-01-02T10:00:00Z', received_at = '2026-01-01T10:00:00Z', attempts = 3 WHERE key = 'evt:u1'`,
		);
		const matched = async (eventFilters: IDataObject) =>
			(await bulk('requeueEvents', table, { dryRun: true, eventFilters })).matched;

		expect(await matched({})).toBe(5);
		expect(await matched({ scope: 'or_ders' })).toBe(2);
		expect(await matched({ scope: ' orxders ' })).toBe(1);
		expect(await matched({ errorContains: 'TIMEOUT' })).toBe(2);
		expect(await matched({ errorContains: '100%' })).toBe(2);
		expect(await matched({ errorContains: '1_0%' })).toBe(0);
		expect(await matched({ parkedBefore: '2026-01-02T10:00:00Z' })).toBe(0);
		expect(await matched({ parkedBefore: '2026-01-02T10:00:00.000001Z' })).toBe(1);
		expect(await matched({ parkedFrom: '2026-01-02T10:00:00Z' })).toBe(5);
		expect(await matched({ parkedFrom: '2026-01-02T11:00:00+01:00' })).toBe(5);
		expect(await matched({ parkedFrom: '2026-01-03' })).toBe(4);
		expect(await matched({ receivedBefore: '2026-01-01T10:00:01' })).toBe(1);
		expect(await matched({ receivedFrom: new Date(Date.now() - 3_600_000) })).toBe(4);
		expect(await matched({ attemptsAtLeast: 2 })).toBe(1);
		expect(await matched({ attemptsAtMost: 1 })).toBe(4);
		expect(await matched({ scope: 'or_ders', errorContains: 'timeout' })).toBe(0);

		expect(
			await bulk('requeueEvents', table, { eventFilters: { errorContains: 'timeout' } }),
		).toMatchObject({ requeued: 2 });
		expect(await inbox(table)).toMatchObject({
			'evt:u1': { dead: false, attempts: 0 },
			'evt:u2': { dead: true },
			'or_ders:evt:s1': { dead: true },
			'orxders:evt:x1': { dead: false, attempts: 0 },
		});
	});

	it('refuses a scope every unscoped key starts with, a text that is no date, attempts that are no whole number', async () => {
		const table = uniqueTableName('bulk');
		await park(await keep(table, ['r1']), table);
		const said = (eventFilters: IDataObject) =>
			bulk('requeueEvents', table, { eventFilters }).then(JSON.stringify, (e: Error) => e.message);
		expect(await said({ scope: 'evt' })).toMatch(
			/^Scope "evt" is refused: keys made without a Scope start with "evt:" too/,
		);
		expect(await said({ parkedBefore: 'yesterday' })).toBe(
			'Parked Before is "yesterday", which is not a date (give ISO 8601 such as 2024-08-09T13:44:16Z)',
		);
		// Read as n8n reads a date (its own reader): a time alone would be today's, so it is refused.
		expect(await said({ receivedFrom: '13:44:16' })).toContain(
			'Received At or After is "13:44:16", which is not a valid date: a time without a date',
		);
		expect(await said({ attemptsAtLeast: 1.5 })).toBe(
			'Attempts At Least must be a whole number from 0 to 2147483647, got 1.5',
		);
		// An expression's number (the status code from an error) is no text to look for: before, the filter
		// was dropped without a word, so Discard Kept Events discarded every dead letter.
		for (const [errorContains, shown] of [
			[502, '502'],
			[true, 'true'],
			[{ code: 502 }, '{"code":502}'],
		] as const)
			expect(await said({ errorContains })).toBe(`Error Contains must be text, got ${shown}`);
		expect(
			await bulk('discardEvents', table, { eventFilters: { errorContains: 502 } }).then(
				JSON.stringify,
				(e: Error) => e.message,
			),
		).toBe('Error Contains must be text, got 502');
		expect(
			await keyOperation('requeueEvents', [], table, { eventState: 'running' }).then(
				JSON.stringify,
				(e: Error) => e.message,
			),
		).toBe(
			'Parameter "eventState" is "running", which this node does not offer; one of dead, due, deadOrDue',
		);
		expect((await inbox(table))['evt:r1']).toMatchObject({ dead: true });
	});

	it('a claim table that never kept an event is told so, naming the event table', async () => {
		const table = uniqueTableName('bulk');
		await claimNode.execute.call(
			executeContext([delivery('plain')], {
				parameters: { keySource: 'auto', claimMode: 'lease', options: { table } },
				credentials: testCredentials(),
			}),
		);
		await expect(bulk('discardEvents', table)).rejects.toThrow(
			`table public.${table} has no event table beside it (${table}_events)`,
		);
	});
});

describe('beside Take Due Events running at the same moment', () => {
	const EVENTS = 300;
	const ids = (round: number) => Array.from({ length: EVENTS }, (_, i) => `race_${round}_${i}`);

	/** Take Due Events, 10 at a time, until `until` resolves; the keys each run took, in order. */
	async function takingUntil(table: string, until: Promise<unknown>): Promise<string[]> {
		let done = false;
		void until.finally(() => (done = true));
		const taken: string[] = [];
		while (!done) taken.push(...keysOf(await takeDue(table, 10)));
		return taken;
	}

	it('Requeue Kept Events (due): an event Take Due took is never made due under its runner; each runs once', async () => {
		const table = uniqueTableName('bulk');
		for (let round = 0; round < 3; round++) {
			const items = await keep(table, ids(round));
			await makeDue(table);
			const requeue = bulk('requeueEvents', table, { eventState: 'due', batchSize: 7 });
			const [takerA, takerB, requeued] = await Promise.all([
				takingUntil(table, requeue),
				takingUntil(table, requeue),
				requeue,
			]);
			// Whatever the requeue made due again (it had not been taken yet) is taken now, once.
			const after: string[] = [];
			for (let more = await takeDue(table); more.length > 0; more = await takeDue(table))
				after.push(...keysOf(more));
			const runs = new Map<string, number>();
			for (const key of [...takerA, ...takerB, ...after]) runs.set(key, (runs.get(key) ?? 0) + 1);
			expect([...runs.keys()].sort()).toEqual(keysOf(items).sort());
			expect([...runs.entries()].filter(([, n]) => n > 1)).toEqual([]);
			expect(requeued.requeued).toBeLessThanOrEqual(EVENTS);
			await admin.query(`UPDATE ${table} SET lease_until = NULL, claim_token = NULL`);
			await admin.query(`DELETE FROM ${table}_events`);
		}
	});

	it('Discard Kept Events (due): each due event is either run or discarded, never both, none lost', async () => {
		const table = uniqueTableName('bulk');
		for (let round = 0; round < 3; round++) {
			const items = await keep(table, ids(round));
			await makeDue(table);
			const discard = bulk('discardEvents', table, { eventState: 'due', batchSize: 7 });
			const [takerA, takerB, discarded] = await Promise.all([
				takingUntil(table, discard),
				takingUntil(table, discard),
				discard,
			]);
			const taken = [...takerA, ...takerB];
			expect(new Set(taken).size).toBe(taken.length);
			const rows = await inbox(table);
			// Taken: kept and held by its runner. Discarded: gone and completed. Nothing else.
			for (const key of taken)
				expect({ key, ...rows[key] }).toMatchObject({ key, kept: true, claim: 'held' });
			const gone = keysOf(items).filter((key) => !taken.includes(key));
			for (const key of gone)
				expect({ key, ...rows[key] }).toMatchObject({ key, kept: false, claim: 'completed' });
			expect(discarded.discarded).toBe(gone.length);
			expect(taken.length + gone.length).toBe(EVENTS);
			await admin.query(`UPDATE ${table} SET lease_until = NULL, claim_token = NULL`);
			await admin.query(`DELETE FROM ${table}_events`);
		}
	});
});
