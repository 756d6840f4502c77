/**
 * Key Source "Polled Item" through the claim node, on real Postgres: Remove Duplicates' Keep Items
 * Where (Value Is New as a claim per item, Value Is Higher / Date Later as a watermark per scope), its
 * default Scope (this node), and what a poll full of repeats writes (nothing for the repeats).
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { executeContext, type ContextOptions } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

const node = new IdempotencyClaim();
const WORKFLOW = 'pollWorkflow0001';
const NODE_ID = '7f4c1a2e-0000-4000-8000-000000000001';

type Extra = Partial<Pick<ContextOptions, 'continueOnFail' | 'nodeId' | 'workflowId' | 'timezone'>>;

/** A poll: items as a schedule + fetch hands them over, each with its value in `id` (or `at`). */
function poll(items: IDataObject[], parameters: IDataObject, extra: Extra = {}) {
	const inputs: INodeExecutionData[] = items.map((json) => ({ json }));
	const context = executeContext(inputs, {
		parameters: { keySource: 'polled', keepItemsWhere: 'new', claimMode: 'once', ...parameters },
		// The field a user's expression {{ $json.id }} (or {{ $json.at }}) reads.
		perItem: (name, index) =>
			name === 'dedupeValue'
				? items[index][parameters.keepItemsWhere === 'later' ? 'at' : 'id']
				: undefined,
		credentials: testCredentials(),
		nodeId: NODE_ID,
		workflowId: WORKFLOW,
		...extra,
	});
	return node.execute.call(context);
}

const ids = (output: INodeExecutionData[]) => output.map((item) => item.json.id);
const records = (from: number, to: number) =>
	Array.from({ length: to - from }, (_, i) => ({
		id: `rec_${from + i}`,
		title: `record ${from + i}`,
	}));

describe('Value Is New', () => {
	it("passes each item the first time its value is seen; the key is this node's scope + evt: + value", async () => {
		const options = { table: uniqueTableName('polled') };
		const [first] = await poll(records(0, 10), { options });
		const [newItems, repeats] = await poll(records(2, 12), { options });
		expect(ids(first)).toEqual(ids(records(0, 10).map((json) => ({ json }))));
		expect(ids(newItems)).toEqual(['rec_10', 'rec_11']);
		expect(ids(repeats)).toEqual(records(2, 10).map((r) => r.id));
		expect(newItems[0].json.idempotency).toMatchObject({
			key: `${WORKFLOW}/${NODE_ID}:evt:rec_10`,
			isNew: true,
			keySource: 'polled_item',
		});
		expect(newItems[0].pairedItem).toEqual({ item: 8 });
		expect(newItems[0].json.title).toBe('record 10');
	});

	it('a value repeated within one input: the first copy is New, every later one Duplicate', async () => {
		const options = { table: uniqueTableName('polled') };
		const input = ['a', 'b', 'a', 'c', 'b', 'a'].map((id, n) => ({ id, n }));
		const [created, duplicate] = await poll(input, { options });
		expect(created.map((item) => item.json.n)).toEqual([0, 1, 3]);
		expect(duplicate.map((item) => item.json.n)).toEqual([2, 4, 5]);
	});

	it('the default scope is per node and per workflow, like Remove Duplicates; one Scope can be shared', async () => {
		const options = { table: uniqueTableName('polled') };
		const items = records(0, 3);
		expect((await poll(items, { options }))[0]).toHaveLength(3);
		expect((await poll(items, { options }, { nodeId: 'another-node' }))[0]).toHaveLength(3);
		expect((await poll(items, { options }, { workflowId: 'otherWorkflow001' }))[0]).toHaveLength(3);
		expect((await poll(items, { options }))[0]).toHaveLength(0);
		// {{ $workflow.id }}: Remove Duplicates' Scope Workflow, shared by every node of the workflow.
		const shared = { ...options, scope: WORKFLOW };
		expect((await poll(items, { options: shared }))[0]).toHaveLength(3);
		expect((await poll(items, { options: shared }, { nodeId: 'another-node' }))[0]).toHaveLength(0);
	});

	it("a poll's Scope is read once, from its first item: one feed, one history", async () => {
		const table = uniqueTableName('polled');
		const items = records(0, 3);
		const context = executeContext(
			items.map((json) => ({ json })),
			{
				parameters: { keySource: 'polled', keepItemsWhere: 'new', options: { table } },
				perItem: (name, index) =>
					name === 'dedupeValue'
						? items[index].id
						: name === 'options.scope'
							? `feed_${index}`
							: undefined,
				credentials: testCredentials(),
			},
		);
		const [created] = await node.execute.call(context);
		expect(created.map((item) => (item.json.idempotency as IDataObject).key)).toEqual(
			items.map((item) => `feed_0:evt:${item.id}`),
		);
	});

	it('a 1,000-item poll with 990 repeats writes 10 rows and leaves the 990 untouched', async () => {
		const table = uniqueTableName('polled');
		await poll(records(0, 990), { options: { table } });
		const versions = async () =>
			new Map(
				(await admin.query(`SELECT key, ctid::text || xmin::text AS v FROM ${table}`)).rows.map(
					(row) => [row.key, row.v],
				),
			);
		const before = await versions();
		const [created, repeats] = await poll(records(0, 1000), { options: { table } });
		expect([created.length, repeats.length]).toEqual([10, 990]);
		const after = await versions();
		expect(after.size).toBe(1000);
		const rewritten = [...before].filter(([key, version]) => after.get(key) !== version);
		expect(rewritten).toEqual([]);
		expect((repeats[0].json.idempotency as IDataObject).deliveries).toBeNull();
	});

	it('Count Repeat Deliveries, turned on, counts the repeats (each one a row update)', async () => {
		const table = uniqueTableName('polled');
		const options = { table, countRepeats: true };
		await poll(records(0, 5), { options });
		const [, repeats] = await poll(records(0, 5), { options });
		expect(repeats.map((item) => (item.json.idempotency as IDataObject).deliveries)).toEqual([
			2, 2, 2, 2, 2,
		]);
	});

	it('an item without a value fails the execution naming it, and nothing is claimed', async () => {
		const table = uniqueTableName('polled');
		const error = await poll([{ id: 'ok' }, { title: 'no id' }], { options: { table } }).catch(
			(e: unknown) => e,
		);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toBe('Item 1: no key: Value to Dedupe On is missing or empty');
		const { rows } = await admin.query('SELECT to_regclass($1) AS t', [table]);
		if (rows[0].t) expect((await admin.query(`SELECT * FROM ${table}`)).rows).toEqual([]);
	});
});

describe('Value Is Higher than Any Previous Value', () => {
	const higher = (table: string, extra: IDataObject = {}) => ({
		keepItemsWhere: 'higher',
		options: { table, ...extra },
	});

	async function markOf(table: string, scope = `${WORKFLOW}/${NODE_ID}`) {
		const { rows } = await admin.query(
			`SELECT kind, mark, previous_mark FROM ${table}_watermarks WHERE scope = $1`,
			[scope],
		);
		return rows[0];
	}

	it('passes values above the mark (all of them the first time); equal and lower go to Duplicate', async () => {
		const table = uniqueTableName('polled_wm');
		const [first] = await poll([{ id: 3 }, { id: 5 }, { id: 4 }], higher(table));
		expect(ids(first)).toEqual([3, 5, 4]);
		const [created, duplicate] = await poll(
			[{ id: 4 }, { id: 5 }, { id: 6 }, { id: '7' }, { id: 6 }],
			higher(table),
		);
		expect(ids(created)).toEqual([6, '7', 6]);
		expect(ids(duplicate)).toEqual([4, 5]);
		expect(created[1]).toMatchObject({
			json: {
				idempotency: {
					scope: `${WORKFLOW}/${NODE_ID}`,
					keepItemsWhere: 'higher',
					value: '7',
					isNew: true,
					previousMark: '5',
					mark: '7',
				},
			},
			pairedItem: { item: 3 },
		});
		expect(await markOf(table)).toEqual({ kind: 'number', mark: '7', previous_mark: '5' });
		// The watermark has its own table: the claim table is not created for it.
		expect((await admin.query('SELECT to_regclass($1) AS t', [table])).rows[0].t).toBeNull();
	});

	it('a value that is not a number is an error naming the item, and the mark does not move', async () => {
		const table = uniqueTableName('polled_wm');
		await poll([{ id: 10 }], higher(table));
		const error = await poll([{ id: 11 }, { id: 'eleven' }, { id: 12 }], higher(table)).catch(
			(e: unknown) => e,
		);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toMatch(
			/^Item 1: Value to Dedupe On is "eleven", which is not a number/,
		);
		expect(await markOf(table)).toMatchObject({ mark: '10' });
	});

	it('with the error output, every item of such a batch leaves there, and the next poll passes them', async () => {
		const table = uniqueTableName('polled_wm');
		await poll([{ id: 10 }], higher(table));
		const [errors, duplicate] = await poll([{ id: 11 }, { id: null }, { id: 12 }], higher(table), {
			continueOnFail: true,
		});
		expect(duplicate).toEqual([]);
		expect(errors.map((item) => item.json)).toEqual([
			{
				error: 'bad_delivery',
				message:
					'Item 0: not compared, because item 1 could not be (Value to Dedupe On is missing or empty); the watermark did not move, so the next poll brings this item again',
			},
			{
				error: 'bad_delivery',
				message: 'Item 1: Value to Dedupe On is missing or empty',
			},
			{
				error: 'bad_delivery',
				message: expect.stringMatching(/^Item 2: not compared/),
			},
		]);
		expect(await markOf(table)).toMatchObject({ mark: '10' });
		expect(ids((await poll([{ id: 11 }, { id: 12 }], higher(table)))[0])).toEqual([11, 12]);
	});

	it('8 overlapping executions of the node with the same poll: each value passes once', async () => {
		const table = uniqueTableName('polled_wm');
		await poll([{ id: 0 }], higher(table));
		for (let round = 1; round <= 20; round++) {
			const items = Array.from({ length: 10 }, (_, i) => ({ id: round * 100 + i }));
			const runs = await Promise.all(Array.from({ length: 8 }, () => poll(items, higher(table))));
			const passed = runs.flatMap(([created]) => ids(created));
			expect(passed.sort()).toEqual(ids(items.map((json) => ({ json }))).sort());
		}
	});
});

describe('Value Is a Date Later than Any Previous Date', () => {
	it('passes later dates (RSS pubDate or ISO), an equal date goes to Duplicate', async () => {
		const table = uniqueTableName('polled_wm');
		const later = { keepItemsWhere: 'later', options: { table } };
		await poll([{ id: 'a', at: 'Fri, 09 Aug 2024 13:44:16 GMT' }], later);
		const [created, duplicate] = await poll(
			[
				{ id: 'a', at: '2024-08-09T15:44:16+02:00' },
				{ id: 'b', at: 'Fri, 09 Aug 2024 13:44:17 GMT' },
				{ id: 'c', at: '2024-08-09T13:00:00Z' },
			],
			later,
		);
		expect(ids(created)).toEqual(['b']);
		expect(ids(duplicate)).toEqual(['a', 'c']);
		expect(created[0].json.idempotency).toMatchObject({
			previousMark: '2024-08-09T13:44:16.000000Z',
			mark: '2024-08-09T13:44:17.000000Z',
		});
	});

	it("reads a date without a zone in the workflow's time zone, as Remove Duplicates does", async () => {
		const table = uniqueTableName('polled_wm');
		const later = { keepItemsWhere: 'later', options: { table } };
		const berlin = { timezone: 'Europe/Berlin' };
		await poll([{ id: 'a', at: '2024-08-09 13:44:16' }], later, berlin);
		// 13:00 UTC is 15:00 in Berlin: after 13:44:16 there, though not after 13:44:16 UTC.
		const [created, duplicate] = await poll(
			[
				{ id: 'b', at: '2024-08-09T13:00:00Z' },
				{ id: 'c', at: '2024-08-09T11:00:00Z' },
			],
			later,
			berlin,
		);
		expect(ids(created)).toEqual(['b']);
		expect(ids(duplicate)).toEqual(['c']);
		expect(created[0].json.idempotency).toMatchObject({
			previousMark: '2024-08-09T11:44:16.000000Z',
			mark: '2024-08-09T13:00:00.000000Z',
		});
	});

	it('a value that is not a date is an error naming the item', async () => {
		const table = uniqueTableName('polled_wm');
		const error = await poll([{ at: 'soon' }], {
			keepItemsWhere: 'later',
			options: { table },
		}).catch((e: unknown) => e);
		expect((error as Error).message).toMatch(
			/^Item 0: Value to Dedupe On is "soon", which is not a date/,
		);
	});
});

describe('Value to Dedupe On, read as n8n would evaluate it', () => {
	/** The node as n8n hands it over: the parameter still holds its expression text. */
	function pollWithExpression(items: IDataObject[], dedupeValue: string, table: string) {
		const context = executeContext(
			items.map((json) => ({ json })),
			{
				parameters: {
					keySource: 'polled',
					keepItemsWhere: 'new',
					dedupeValue,
					options: { table, scope: 's' },
				},
				credentials: testCredentials(),
			},
		);
		return node.execute.call(context);
	}
	const keys = (output: INodeExecutionData[]) =>
		output.map((item) => (item.json.idempotency as IDataObject).key);

	it('{{ $json.id }} and {{ $json.a.list[1].id }} are read from each item', async () => {
		const table = uniqueTableName('polled');
		const [created] = await pollWithExpression([{ id: 7 }, { id: 'b' }], '={{ $json.id }}', table);
		expect(keys(created)).toEqual(['s:evt:7', 's:evt:b']);
		const [nested] = await pollWithExpression(
			[{ a: { list: [{ id: 'x' }, { id: 'y' }] } }],
			'={{ $json.a.list[1].id }}',
			table,
		);
		expect(keys(nested)).toEqual(['s:evt:y']);
	});

	it('{{ $json.guid || $json.link }}: the first value that is set, as JavaScript gives it', async () => {
		const table = uniqueTableName('polled');
		const [created] = await pollWithExpression(
			[{ guid: 'g1', link: 'l1' }, { guid: '', link: 'l2' }, { link: 'l3' }],
			'={{ $json.guid || $json.link }}',
			table,
		);
		expect(keys(created)).toEqual(['s:evt:g1', 's:evt:l2', 's:evt:l3']);
	});

	it('any other expression is left to n8n to evaluate', async () => {
		const table = uniqueTableName('polled');
		// This test context does not evaluate expressions: n8n's value here is the text itself.
		const [created] = await pollWithExpression([{ id: 1 }], '={{ $json.id + 1 }}', table);
		expect(keys(created)).toEqual(['s:evt:={{ $json.id + 1 }}']);
	});
});

/** What the migration guide lists as differing from Remove Duplicates v2, each shown here. */
describe('where it differs from Remove Duplicates v2', () => {
	it('items leave in input order (Remove Duplicates groups them by value, numeric-looking values first)', async () => {
		const options = { table: uniqueTableName('polled') };
		const [created] = await poll(
			['10', '9', 'b', '2', 'a'].map((id) => ({ id })),
			{ options },
		);
		expect(ids(created)).toEqual(['10', '9', 'b', '2', 'a']);
	});

	it('an object or array value is refused naming the item (Remove Duplicates reads every object as "[object Object]")', async () => {
		const options = { table: uniqueTableName('polled') };
		await expect(poll([{ id: 'ok' }, { id: { a: 1 } }], { options })).rejects.toThrow(
			'Item 1: Value to Dedupe On is an object; an id must be a string or a number',
		);
		await expect(poll([{ id: ['x'] }], { options })).rejects.toThrow(/Item 0: .* is an array/);
	});

	it('dates are compared to the microsecond (Remove Duplicates, through luxon, to the millisecond)', async () => {
		const table = uniqueTableName('polled_wm');
		const later = { keepItemsWhere: 'later', options: { table } };
		await poll([{ id: 'a', at: '2024-08-09T13:44:16.123456Z' }], later);
		const [created] = await poll([{ id: 'b', at: '2024-08-09T13:44:16.123457Z' }], later);
		expect(ids(created)).toEqual(['b']);
	});

	it('each passed item carries `idempotency` (its key, or its scope and the marks); Clear passes its items on with it too', async () => {
		const options = { table: uniqueTableName('polled') };
		const [created] = await poll([{ id: 'x' }], { options });
		expect(Object.keys(created[0].json)).toEqual(['id', 'idempotency']);
	});
});
