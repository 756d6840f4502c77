/**
 * Idempotency Limit's Take Slot and Free Slot through the node's own execute() against real Postgres:
 * many executions at once never have more than Max at Once items of a key in their business step (its
 * start and end recorded by the database), and every item runs once; a holder that died (its slot never
 * freed, its connections cut) gives its slot back when its lease ends, on the database's clock; a waiting
 * execution takes a slot as soon as one is freed; only the holder frees a slot; an item that cannot be
 * read fails by its number and takes nothing.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { executeContext } from '../../../harness/node/executeContext';
import { IdempotencyLimit } from '../../../nodes/Idempotency/IdempotencyLimit.node';
import { limitTables } from '../../../nodes/Idempotency/store/limits/limitTables';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import {
	createTestRole,
	testCredentials,
	testPool,
	uniqueTableName,
	type TestRole,
} from '../../support/database';
import { databaseClock } from '../../support/databaseClock';
import { terminateConnectionsOf } from '../../support/terminateConnections';

const clock = databaseClock();
const node = new IdempotencyLimit();
/** Fewer connections than executions at once: a waiting execution must not keep one. */
const credentials = testCredentials({ maxConnections: 4 });
const GOT_SLOT = 0;
const NO_SLOT = 1;
const pool = testPool(4);
afterAll(() => pool.end());

function run(
	operation: string,
	items: INodeExecutionData[],
	table: string,
	parameters: IDataObject = {},
	extend: (context: IExecuteFunctions) => void = () => undefined,
	credential: object = credentials,
) {
	const context = executeContext(items, {
		parameters: {
			operation,
			maxAtOnce: 2,
			slotLeaseSeconds: 300,
			whenNoSlot: 'leave',
			maxWaitSeconds: 10,
			...parameters,
			options: { table },
		},
		// What `{{ $json.customer }}` and `{{ $json.idempotency.slot.slotId }}` evaluate to.
		perItem: (name, index) =>
			name === 'limitKey'
				? (items[index].json.customer ?? '')
				: name === 'slotId'
					? slotOf(items[index])?.slotId
					: undefined,
		credentials: credential,
		nodeType: 'idempotencyLimit',
		nodeName: 'Idempotency Limit',
	});
	extend(context);
	return node.execute.call(context);
}

const slotOf = (item: INodeExecutionData) =>
	(item.json.idempotency as IDataObject | undefined)?.slot as IDataObject | undefined;
const order = (customer: string, n = 0): INodeExecutionData => ({ json: { customer, n } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const take = (table: string, customer: string, parameters: IDataObject = {}) =>
	run('takeSlot', [order(customer)], table, parameters);
const free = (table: string, item: INodeExecutionData) => run('freeSlot', [item], table);

async function stepsTable(): Promise<string> {
	const steps = uniqueTableName('steps');
	await pool.query(
		`CREATE TABLE ${steps} (customer text, n int, started_at timestamptz, ended_at timestamptz)`,
	);
	return steps;
}

/** The business step: its start and end as the database's clock has them, a few milliseconds apart. */
async function businessStep(steps: string, item: INodeExecutionData) {
	const { customer, n } = item.json;
	await pool.query(`INSERT INTO ${steps} VALUES ($1, $2, clock_timestamp(), NULL)`, [customer, n]);
	await sleep(5 + Math.random() * 20);
	await pool.query(
		`UPDATE ${steps} SET ended_at = clock_timestamp() WHERE customer = $1 AND n = $2`,
		[customer, n],
	);
}

describe('Take Slot and Free Slot', () => {
	it('never lets more than Max at Once items of a key run at once, and runs every item once', async () => {
		const table = uniqueTableName('limits');
		const steps = await stepsTable();
		const customers = Array.from({ length: 8 }, (_, i) => `customer-${i}`);
		const executions = Array.from({ length: 64 }, async (_, n) => {
			const [got, none] = await take(table, customers[n % 8], {
				whenNoSlot: 'wait',
				maxWaitSeconds: 60,
			}).then((outputs) =>
				outputs.map((output) => output.map((item) => ({ ...item, json: { ...item.json, n } }))),
			);
			expect(none).toEqual([]);
			await businessStep(steps, got[0]);
			const [[freed]] = await free(table, got[0]);
			expect(slotOf(freed)?.freed).toBe(true);
		});
		await Promise.all(executions);

		const { rows } = await pool.query<{ customer: string; ran: number; most: number }>(
			`SELECT s.customer, count(*)::int AS ran,
				max((SELECT count(*) FROM ${steps} o WHERE o.customer = s.customer
					AND o.started_at <= s.started_at AND o.ended_at > s.started_at))::int AS most
			 FROM ${steps} s GROUP BY s.customer ORDER BY s.customer`,
		);
		expect(rows.map((row) => row.customer)).toEqual(customers);
		for (const row of rows) {
			expect(row.ran).toBe(8);
			expect(row.most).toBeLessThanOrEqual(2);
		}
		// Every item ran once, and at some moment two items of a key did run together.
		const { rows: once } = await pool.query(
			`SELECT count(DISTINCT n)::int AS items, count(*)::int AS steps FROM ${steps} WHERE ended_at IS NOT NULL`,
		);
		expect(once[0]).toEqual({ items: 64, steps: 64 });
		expect(Math.max(...rows.map((row) => row.most))).toBe(2);
	});

	it('sends an item on with its slot, and one that finds none on No Slot with when to try again', async () => {
		const table = uniqueTableName('limits');
		const [[first]] = await take(table, 'acme', { slotLeaseSeconds: 30 });
		expect(slotOf(first)).toEqual({
			key: 'acme',
			slotId: expect.any(String),
			leaseUntil: expect.any(String),
		});
		expect(first.json).toMatchObject({ customer: 'acme' });
		expect(first.pairedItem).toEqual({ item: 0 });
		await take(table, 'acme', { slotLeaseSeconds: 20 });
		const [got, [none]] = await take(table, 'acme');
		expect(got).toEqual([]);
		expect(slotOf(none)).toEqual({ key: 'acme', slotId: null, retryAfterSeconds: 20 });
		// Another key has its own slots.
		expect((await take(table, 'globex'))[GOT_SLOT]).toHaveLength(1);
	});

	it("gives a dead holder's slots back once their lease ends, even with its connections cut", async () => {
		const admin = testPool(1);
		let role: TestRole | undefined;
		try {
			role = await createTestRole(admin, 'limit');
			const theirs = role.credentials({ maxConnections: 2 });
			const table = uniqueTableName('limits');
			const lease = { slotLeaseSeconds: 60 };
			const held = await Promise.all(
				[1, 2].map(() => run('takeSlot', [order('acme')], table, lease, undefined, theirs)),
			);
			expect(held.map((outputs) => outputs[GOT_SLOT].length)).toEqual([1, 1]);
			// The holders' executions die mid-step: their connections cut, Free Slot never runs.
			await terminateConnectionsOf(admin, [role.name], { waitMs: 0 });
			const [, [none]] = await run('takeSlot', [order('acme')], table, lease, undefined, theirs);
			expect(slotOf(none)?.retryAfterSeconds).toBe(60);
			await clock.advance(59);
			expect((await take(table, 'acme', lease))[NO_SLOT]).toHaveLength(1);
			await clock.advance(1.5);
			const [taken] = await take(table, 'acme', { ...lease, maxAtOnce: 2 });
			const [second] = await take(table, 'acme', { ...lease, maxAtOnce: 2 });
			expect([taken.length, second.length]).toEqual([1, 1]);
			// A dead holder that comes back late frees nothing: its slot is another's now.
			const [[late]] = await free(table, held[0][GOT_SLOT][0]);
			expect(slotOf(late)?.freed).toBe(false);
			expect((await take(table, 'acme'))[NO_SLOT]).toHaveLength(1);
		} finally {
			await role?.drop();
			await admin.end();
		}
	});

	it('wakes a waiting execution as soon as a slot of its key is freed', async () => {
		const table = uniqueTableName('limits');
		const [[holder]] = await take(table, 'acme', { maxAtOnce: 1 });
		const waiting = take(table, 'acme', { maxAtOnce: 1, whenNoSlot: 'wait', maxWaitSeconds: 30 });
		await sleep(300);
		const freedAt = Date.now();
		await free(table, holder);
		const [[got]] = await waiting;
		expect(slotOf(got)?.slotId).toEqual(expect.any(String));
		expect(Date.now() - freedAt).toBeLessThan(300);
	});

	it('sends no item on with a slot whose lease ran out while other items of its execution waited', async () => {
		const table = uniqueTableName('limits');
		const lease = { maxAtOnce: 1, slotLeaseSeconds: 60 };
		const [[holder]] = await take(table, 'globex', { ...lease, slotLeaseSeconds: 300 });
		// acme and initech get their slots at once; globex waits behind the holder.
		const waiting = run('takeSlot', [order('acme'), order('initech'), order('globex')], table, {
			...lease,
			whenNoSlot: 'wait',
			maxWaitSeconds: 30,
		});
		await sleep(200);
		// The wait outlasts acme's and initech's leases; another execution takes acme's slot meanwhile.
		await clock.advance(61);
		const [[other]] = await take(table, 'acme', lease);
		expect(slotOf(other)?.slotId).toEqual(expect.any(String));
		await free(table, holder);
		const [got, none] = await waiting;
		// acme's slot is the other execution's: acme does not also leave on Got Slot.
		expect(got.map((item) => item.json.customer)).toEqual(['initech', 'globex']);
		expect(none.map((item) => item.json.customer)).toEqual(['acme']);
		// The slots that left have their whole lease ahead of them.
		const { rows } = await pool.query<{ now: Date }>('SELECT now()');
		for (const item of got)
			expect(Date.parse(slotOf(item)?.leaseUntil as string)).toBeGreaterThan(
				rows[0].now.valueOf() + 59_000,
			);
	});

	it('leaves a waiting execution on No Slot when Max Wait is up', async () => {
		const table = uniqueTableName('limits');
		await take(table, 'acme', { maxAtOnce: 1 });
		const started = Date.now();
		const [got, [none]] = await take(table, 'acme', {
			maxAtOnce: 1,
			whenNoSlot: 'wait',
			maxWaitSeconds: 0.3,
		});
		expect(got).toEqual([]);
		expect(slotOf(none)?.retryAfterSeconds).toBe(300);
		expect(Date.now() - started).toBeGreaterThanOrEqual(290);
	});

	it('refuses to free a slot for anyone but its holder, and says so', async () => {
		const table = uniqueTableName('limits');
		const [[holder]] = await take(table, 'acme', { maxAtOnce: 1 });
		const stranger: INodeExecutionData = {
			json: { idempotency: { slot: { key: 'acme', slotId: 'not-the-holder' } } },
		};
		const [[refused]] = await free(table, stranger);
		expect(slotOf(refused)).toEqual({ key: 'acme', slotId: 'not-the-holder', freed: false });
		expect((await take(table, 'acme', { maxAtOnce: 1 }))[NO_SLOT]).toHaveLength(1);
		const [[freed]] = await free(table, holder);
		expect(slotOf(freed)?.freed).toBe(true);
		// Freed once: a second Free Slot (a retried execution) frees nothing more.
		const [[again]] = await free(table, holder);
		expect(slotOf(again)?.freed).toBe(false);
		expect((await take(table, 'acme', { maxAtOnce: 1 }))[GOT_SLOT]).toHaveLength(1);
	});

	it('gives back the slots an execution took when the database refuses a later item of it', async () => {
		const table = uniqueTableName('limits');
		await take(table, 'warm');
		// The database refuses any statement on the slots of key "boom" (as it may refuse one item's, for
		// a full disk or a timeout): the execution fails as a whole, after acme took its slot.
		const slots = limitTables(tableRef('public', table)).slots;
		const refuse = uniqueTableName('refuse');
		await pool.query(
			`CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				IF NEW.key = 'boom' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`,
		);
		await pool.query(
			`CREATE TRIGGER ${refuse} BEFORE INSERT OR UPDATE ON ${slots} FOR EACH ROW EXECUTE FUNCTION ${refuse}()`,
		);
		try {
			await expect(
				run('takeSlot', [order('acme'), order('boom')], table, { maxAtOnce: 1 }),
			).rejects.toThrow(/refused/);
			// No item went on to the work: acme's slot is free for the sender's retry, not held for 300 s.
			expect((await take(table, 'acme', { maxAtOnce: 1 }))[GOT_SLOT]).toHaveLength(1);
		} finally {
			await pool.query(`DROP TRIGGER ${refuse} ON ${slots}; DROP FUNCTION ${refuse}()`);
		}
	});

	it('gives back the slots an execution took when it is cancelled while others of it wait', async () => {
		const table = uniqueTableName('limits');
		await take(table, 'globex', { maxAtOnce: 1 });
		const cancel = new AbortController();
		const waiting = run(
			'takeSlot',
			[order('acme'), order('globex')],
			table,
			{ maxAtOnce: 1, whenNoSlot: 'wait', maxWaitSeconds: 30 },
			(context) => {
				context.getExecutionCancelSignal = () => cancel.signal;
			},
		);
		await sleep(200);
		cancel.abort();
		// Cancelled, the execution runs nothing after this node (no Free Slot): acme's slot is not kept.
		await expect(waiting).rejects.toThrow(/cancelled/);
		expect((await take(table, 'acme', { maxAtOnce: 1 }))[GOT_SLOT]).toHaveLength(1);
	});

	it("gives each item the Slot Lease its own expression says, not the first item's", async () => {
		const table = uniqueTableName('limits');
		// What `{{ $json.slow ? 600 : 60 }}` evaluates to per item.
		const [got] = await run(
			'takeSlot',
			[order('acme'), { json: { customer: 'globex', slow: true } }],
			table,
			{},
			(context) => {
				const parameter = context.getNodeParameter.bind(context);
				context.getNodeParameter = ((name: string, index: number, fallback?: unknown) =>
					name === 'slotLeaseSeconds'
						? [60, 600][index]
						: parameter(name, index, fallback)) as IExecuteFunctions['getNodeParameter'];
			},
		);
		const { rows } = await pool.query<{ now: Date }>('SELECT now()');
		const leaseOf = (item: INodeExecutionData) =>
			(Date.parse(slotOf(item)?.leaseUntil as string) - rows[0].now.valueOf()) / 1000;
		expect(got.map(leaseOf).map(Math.round)).toEqual([60, 600]);
	});

	it('says freed once when one batch frees the same slot twice', async () => {
		const table = uniqueTableName('limits');
		const [[holder]] = await take(table, 'acme', { maxAtOnce: 1 });
		const [freed] = await run('freeSlot', [holder, holder], table);
		expect(freed.map((item) => slotOf(item)?.freed)).toEqual([true, false]);
	});

	it.each([
		[
			'Max at Once below 1',
			{ maxAtOnce: 0 },
			[order('acme'), order('acme')],
			/^Item 0: Max at Once must be a whole number from 1 to 1000, got 0$/,
		],
		['an empty key', {}, [order('acme'), order('')], /^Item 1: the limit key is empty$/],
	])(
		'refuses %s, naming the item, and takes nothing',
		async (_case, parameters, items, message) => {
			const table = uniqueTableName('limits');
			await expect(run('takeSlot', items, table, parameters)).rejects.toThrow(message);
			const { rows } = await pool.query<{ exists: boolean }>(
				'SELECT to_regclass($1) IS NOT NULL AS exists',
				[limitTables(tableRef('public', table)).slots],
			);
			expect(rows[0].exists).toBe(false);
		},
	);

	it('refuses an operation or a choice its description does not offer, taking nothing', async () => {
		const table = uniqueTableName('limits');
		await expect(run('takeEverything', [order('acme')], table)).rejects.toThrow(/takeEverything/);
		await expect(run('takeSlot', [order('acme')], table, { whenNoSlot: 'queue' })).rejects.toThrow(
			/queue/,
		);
		const { rows } = await pool.query<{ exists: boolean }>(
			'SELECT to_regclass($1) IS NOT NULL AS exists',
			[limitTables(tableRef('public', table)).slots],
		);
		expect(rows[0].exists).toBe(false);
	});

	it("tells a Free Slot whose tables do not exist to name its Take Slot's table, not to create them", async () => {
		// Create Table If Missing is on (its default): Free Slot creates nothing, and says why it failed.
		const table = uniqueTableName('limits');
		const stranger: INodeExecutionData = {
			json: { idempotency: { slot: { key: 'acme', slotId: 'from-another-table' } } },
		};
		const failure = run('freeSlot', [stranger], table);
		await expect(failure).rejects.toThrow(/do not exist; no slot was taken in them/);
		await expect(failure).rejects.not.toThrow(/turn on "Create Table If Missing"/);
	});

	it('refuses a Free Slot without a slot ID, naming the item', async () => {
		const table = uniqueTableName('limits');
		await expect(run('freeSlot', [{ json: {} }], table, { slotId: '' })).rejects.toThrow(
			/^Item 0: the slot ID is empty; map idempotency.slot.slotId from the Take Slot output$/,
		);
	});

	it('sends an item that cannot be read to No Slot under "Continue (regular output)"', async () => {
		const table = uniqueTableName('limits');
		const [got, none] = await run('takeSlot', [order(''), order('acme')], table, {}, (context) => {
			context.getNode().onError = 'continueRegularOutput';
		});
		expect(got.map((item) => item.json.customer)).toEqual(['acme']);
		expect(none).toEqual([
			{
				json: { error: 'bad_delivery', message: 'Item 0: the limit key is empty' },
				pairedItem: { item: 0 },
			},
		]);
	});
});
