/**
 * Idempotency Burst through the node's own execute() against real Postgres: items that arrive under one
 * key are collected into bursts, the execution that started a burst outputs it once with every item in
 * arrival order, the others leave on Joined at once; bursts split where the quiet period, the maximum
 * wait and the maximum item count say; many executions joining while a burst ends put every item in
 * exactly one burst; a holder that died loses nothing (Flush Due Bursts, or the next burst of its key,
 * takes it over). Every rule is checked against the times the database recorded, not the test's clock.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import type { Pool } from 'pg';
import { randomBytes } from 'node:crypto';

import { executeContext } from '../../harness/node/executeContext';
import { START_SLACK_MS } from '../../harness/webhooks/chatConversations';
import { IdempotencyBurst } from '../../nodes/Idempotency/IdempotencyBurst.node';
import { burstTables, withBurstTables } from '../../nodes/Idempotency/store/bursts/burstTables';
import { collectItem } from '../../nodes/Idempotency/store/bursts/collectItem';
import { tableRef } from '../../nodes/Idempotency/store/table/tableRef';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const node = new IdempotencyBurst();
/** Fewer connections than executions at once: a waiting holder must not keep one. */
const credentials = testCredentials({ maxConnections: 4 });
const BURST = 0;
const JOINED = 1;

interface Rules {
	edge?: 'trailing' | 'leading';
	quietSeconds?: number;
	maxWaitSeconds?: number;
	maxItems?: number;
	leaseSeconds?: number;
}

function run(
	operation: string,
	items: INodeExecutionData[],
	table: string,
	parameters: IDataObject = {},
	extend: (context: IExecuteFunctions) => void = () => undefined,
) {
	const context = executeContext(items, {
		parameters: {
			operation,
			edge: 'trailing',
			quietSeconds: 0.4,
			maxWaitSeconds: 30,
			maxItems: 50,
			leaseSeconds: 300,
			maxBursts: 100,
			...parameters,
			options: { table, ...((parameters.options as IDataObject) ?? {}) },
		},
		// An Item ID option set in a test means "the message's n", as `{{ $json.n }}` would evaluate.
		perItem: (name, index) =>
			name === 'options.itemId'
				? (parameters.options as IDataObject | undefined)?.itemId && String(items[index].json.n)
				: expressions(items[index])[name],
		credentials,
		nodeType: 'idempotencyBurst',
		nodeName: 'Idempotency Burst',
	});
	extend(context);
	return node.execute.call(context);
}

/** What the expressions a workflow would set evaluate to for an item: the chat, the burst's ID and claim ID. */
const expressions = (item: INodeExecutionData): Record<string, unknown> => ({
	burstKey: item.json.chat ?? '',
	burstId: (item.json.burst as IDataObject | undefined)?.id,
	claimId: (item.json.burst as IDataObject | undefined)?.claimId,
});

const collect = (table: string, chat: string, n: number, rules: Rules = {}) =>
	run('collect', [message(chat, n)], table, { ...rules });
const message = (chat: string, n: number): INodeExecutionData => ({
	json: { chat, n, text: `message ${n}` },
});
const burstOf = (item: INodeExecutionData) => item.json.burst as IDataObject;
const numbers = (item: INodeExecutionData) =>
	(burstOf(item).items as IDataObject[]).map((json) => json.n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Sets the node's On Error setting (the context's Continue On Fail reads it). */
const onError =
	(setting: 'continueErrorOutput' | 'continueRegularOutput') => (context: IExecuteFunctions) => {
		context.getNode().onError = setting;
	};
const ms = (iso: unknown) => Date.parse(String(iso));

/**
 * Sends message n of a chat `gaps[n]` ms after message n − 1 was stored (its execution returned on
 * Joined, or, for one that waits to run a burst, its row is in the table), as one sender typing does.
 */
async function conversation(table: string, chat: string, gaps: number[], rules: Rules = {}) {
	const executions: Array<Promise<INodeExecutionData[][]>> = [];
	for (let n = 0; n < gaps.length; n++) {
		await sleep(gaps[n]);
		const execution = collect(table, chat, n, rules);
		executions.push(execution);
		const done = { value: false };
		await Promise.race([execution, stored(table, chat, n, done)]);
		done.value = true;
	}
	return Promise.all(executions);
}

async function stored(table: string, chat: string, n: number, done: { value: boolean }) {
	const { items } = burstTables(tableRef('public', table));
	while (!done.value) {
		const found = await pool
			.query(`SELECT 1 FROM ${items} WHERE item->>'chat' = $1 AND (item->>'n')::int = $2`, [
				chat,
				n,
			])
			.catch(() => ({ rowCount: 0 }));
		if (found.rowCount) return;
		await sleep(5);
	}
}

const bursts = (outputs: INodeExecutionData[][][]) => outputs.flatMap((output) => output[BURST]);
const joined = (outputs: INodeExecutionData[][][]) => outputs.flatMap((output) => output[JOINED]);

/**
 * The rules, on the database's times, for the bursts of one key: inside a burst no gap reached the quiet
 * period and no burst outgrew Max Items; a burst that ended quietly ended a quiet period after its last
 * item; the next burst began only once the one before had ended (a full one ends as its last item lands).
 * An item that starts a burst is timed when its statement began: one that had to wait for the statement
 * ending the burst before (milliseconds, more on a busy machine) is timed just before that end, so the
 * check allows START_SLACK_MS.
 */
function expectRulesKept(ofKey: IDataObject[], quietMs: number, maxItems: number) {
	const sorted = [...ofKey].sort((a, b) => ms(a.openedAt) - ms(b.openedAt));
	for (const burst of sorted) {
		const arrivals = (burst.arrivedAt as string[]).map(ms);
		expect(arrivals.length).toBeLessThanOrEqual(maxItems);
		for (let i = 1; i < arrivals.length; i++) {
			expect(arrivals[i]).toBeGreaterThanOrEqual(arrivals[i - 1]);
			expect(arrivals[i] - arrivals[i - 1]).toBeLessThan(quietMs + 1);
		}
		if (burst.endedBy === 'quiet')
			expect(ms(burst.endedAt) - arrivals.at(-1)!).toBeCloseTo(quietMs, -1);
		if (burst.endedBy === 'maxItems') expect(arrivals).toHaveLength(maxItems);
	}
	for (let i = 1; i < sorted.length; i++)
		expect(ms(sorted[i].openedAt)).toBeGreaterThanOrEqual(
			ms(sorted[i - 1].endedAt) - START_SLACK_MS,
		);
}

let pool: Pool;
beforeAll(() => (pool = testPool(2)));
afterAll(() => pool.end());

async function leftInTables(table: string): Promise<{ bursts: number; items: number }> {
	const tables = burstTables(tableRef('public', table));
	const { rows } = await pool.query(
		`SELECT (SELECT count(*) FROM ${tables.bursts})::int AS bursts, (SELECT count(*) FROM ${tables.items})::int AS items`,
	);
	return rows[0];
}

describe('trailing: the work runs once the burst was quiet', () => {
	it('four messages 60 ms apart: one burst, all four in order, run by the execution of the first; the others leave on Joined', async () => {
		const table = uniqueTableName('burst');
		// A quiet period far longer than the gaps: a busy machine must not split the burst.
		const outputs = await conversation(table, 'c1', [0, 60, 60, 60], { quietSeconds: 1 });
		expect(outputs[0][JOINED]).toEqual([]);
		const [burst] = outputs[0][BURST];
		expect(numbers(burst)).toEqual([0, 1, 2, 3]);
		expect(burstOf(burst)).toMatchObject({
			key: 'c1',
			count: 4,
			edge: 'trailing',
			endedBy: 'quiet',
			takenOver: false,
		});
		expect((burstOf(burst).items as IDataObject[])[2]).toEqual({
			chat: 'c1',
			n: 2,
			text: 'message 2',
		});
		// The quiet period runs from the last arrival.
		const arrivals = (burstOf(burst).arrivedAt as string[]).map(ms);
		expect(ms(burstOf(burst).endedAt) - arrivals[3]).toBeCloseTo(1000, -1);
		for (const output of outputs.slice(1)) {
			expect(output[BURST]).toEqual([]);
			expect(output[JOINED].map((item) => burstOf(item))).toEqual([
				expect.objectContaining({ id: burstOf(burst).id, key: 'c1', joined: true }),
			]);
		}
		expect(joined(outputs).map((item) => burstOf(item).seq)).toEqual([2, 3, 4]);
		expect(joined(outputs).map((item) => item.json.n)).toEqual([1, 2, 3]);
	});

	it('the execution that started the burst returns soon after its quiet period ends', async () => {
		const table = uniqueTableName('burst');
		const [[burst]] = await collect(table, 'c2', 0);
		const returned = Date.now();
		const ended = ms(burstOf(burst).endedAt);
		// Both clocks are this machine's: the look comes right after the end the database reported, not
		// at the next of the looks a second apart (600 ms late for this 400 ms quiet period).
		expect(returned - ended).toBeGreaterThanOrEqual(-5);
		expect(returned - ended).toBeLessThan(500);
	});

	it('a gap longer than the quiet period starts a new burst, run by its own first execution', async () => {
		const table = uniqueTableName('burst');
		const outputs = await conversation(table, 'c3', [0, 50, 2500, 50], { quietSeconds: 1.5 });
		const [first, second] = bursts(outputs);
		expect(numbers(first)).toEqual([0, 1]);
		expect(numbers(second)).toEqual([2, 3]);
		expect(outputs[2][BURST]).toEqual([second]);
		expect(burstOf(first).id).not.toBe(burstOf(second).id);
	});

	it('Max Items: a full burst ends at once, and the next message starts another', async () => {
		const table = uniqueTableName('burst');
		const outputs = await conversation(table, 'c4', [0, 20, 20, 20], {
			maxItems: 3,
			quietSeconds: 2,
		});
		const [full, rest] = bursts(outputs);
		expect(numbers(full)).toEqual([0, 1, 2]);
		expect(burstOf(full).endedBy).toBe('maxItems');
		// Ended as the third message landed, not a quiet period after it (the database's times).
		const arrivals = (burstOf(full).arrivedAt as string[]).map(ms);
		expect(Math.abs(ms(burstOf(full).endedAt) - arrivals[2])).toBeLessThanOrEqual(1);
		expect(numbers(rest)).toEqual([3]);
	}, 20_000);

	it('Max Wait: messages that keep coming are cut into bursts no longer than the maximum wait', async () => {
		const table = uniqueTableName('burst');
		const outputs = await conversation(table, 'c5', Array(16).fill(100), {
			quietSeconds: 1.5,
			maxWaitSeconds: 1,
		});
		const all = bursts(outputs);
		expect(all.length).toBeGreaterThanOrEqual(2);
		expect(burstOf(all[0]).endedBy).toBe('maxWait');
		expect(all.flatMap(numbers)).toEqual([...Array(16).keys()]);
		for (const burst of all) {
			const arrivals = (burstOf(burst).arrivedAt as string[]).map(ms);
			expect(arrivals.at(-1)! - arrivals[0]).toBeLessThan(1000);
			expect(ms(burstOf(burst).endedAt) - ms(burstOf(burst).openedAt)).toBeLessThanOrEqual(1001);
		}
	});
});

describe('leading: the first message runs at once', () => {
	it('the first message runs alone at once; those within the quiet period run together when it ends; after a quiet period the next leads again', async () => {
		const table = uniqueTableName('burst');
		const rules: Rules = { edge: 'leading', quietSeconds: 1.5 };
		const [[lead]] = await collect(table, 'c6', 0, rules);
		expect(numbers(lead)).toEqual([0]);
		expect(burstOf(lead)).toMatchObject({ edge: 'leading', endedBy: 'leading', count: 1 });
		// It ended as it arrived (the database's times), not a quiet period later.
		expect(burstOf(lead).endedAt).toBe((burstOf(lead).arrivedAt as string[])[0]);
		const rest = await conversation(table, 'c6', [50, 50, 50], rules);
		const [tail] = bursts(rest);
		expect(numbers(tail)).toEqual([0, 1, 2]);
		expect(burstOf(tail)).toMatchObject({ edge: 'trailing', endedBy: 'quiet' });
		expect(rest[0][BURST]).toEqual([tail]);
		expect(joined(rest)).toHaveLength(2);
		await sleep(1700);
		const [[again]] = await collect(table, 'c6', 9, rules);
		expect(burstOf(again)).toMatchObject({ edge: 'leading', count: 1 });
		expect(numbers(again)).toEqual([9]);
	});

	it('a leading message with no follower leaves no burst behind once Completed and flushed', async () => {
		const table = uniqueTableName('burst');
		const [[lead]] = await collect(table, 'c7', 0, { edge: 'leading', quietSeconds: 0.2 });
		await run('complete', [lead], table);
		await sleep(300);
		expect(await run('flush', [{ json: {} }], table)).toEqual([[]]);
		expect(await leftInTables(table)).toEqual({ bursts: 0, items: 0 });
	});
});

describe('many executions at once', () => {
	it('8 chats, 30 messages each from several senders, sent around the quiet period: every message in exactly one burst, each burst run once, split where the rules say', async () => {
		const table = uniqueTableName('burst');
		const quietMs = 150;
		const chats = Array.from({ length: 8 }, (_, i) => `chat${i}`);
		const sends: Array<Promise<INodeExecutionData[][]>> = [];
		let seed = 7;
		const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
		for (const chat of chats) {
			let at = 0;
			for (let n = 0; n < 30; n++) {
				// Gaps from 0 to twice the quiet period, so bursts end while messages are arriving.
				at += random() * 2 * quietMs;
				sends.push(
					sleep(at).then(() =>
						collect(table, chat, n, { quietSeconds: quietMs / 1000, maxItems: 12 }),
					),
				);
			}
		}
		const outputs = await Promise.all(sends);
		const ran = bursts(outputs);

		// Each burst ran once, and every message is in exactly one of them.
		const ids = ran.map((burst) => burstOf(burst).id);
		expect(new Set(ids).size).toBe(ids.length);
		for (const chat of chats) {
			const ofChat = ran.filter((burst) => burstOf(burst).key === chat);
			expect(ofChat.flatMap(numbers).sort((a, b) => Number(a) - Number(b))).toEqual([
				...Array(30).keys(),
			]);
		}
		// Each Joined message names a burst that ran, and holds the place it has there.
		for (const item of joined(outputs)) {
			const burst = ran.find((candidate) => burstOf(candidate).id === burstOf(item).id)!;
			expect((burstOf(burst).items as IDataObject[])[Number(burstOf(item).seq) - 1]).toEqual({
				chat: item.json.chat,
				n: item.json.n,
				text: item.json.text,
			});
		}
		for (const chat of chats)
			expectRulesKept(
				ran.map(burstOf).filter((b) => b.key === chat),
				quietMs,
				12,
			);
		// Completing every burst leaves the tables empty: nothing was kept twice or left behind.
		await run('complete', ran, table);
		expect(await leftInTables(table)).toEqual({ bursts: 0, items: 0 });
	}, 60_000);
});

describe('joining while the burst ends', () => {
	it('40 executions at once around the quiet period’s end, bursts of at most 8: each message in exactly one burst, split where the rules say', async () => {
		const table = uniqueTableName('burst');
		const quietMs = 300;
		const rules = { quietSeconds: quietMs / 1000, maxItems: 8 };
		const holder = collect(table, 'race', 0, rules);
		await sleep(quietMs - 40);
		const racers = Array.from({ length: 40 }, (_, i) =>
			sleep(i * 2).then(() => collect(table, 'race', i + 1, rules)),
		);
		const outputs = [await holder, ...(await Promise.all(racers))];
		const ran = bursts(outputs).map(burstOf);
		expect(
			ran
				.flatMap((burst) => (burst.items as IDataObject[]).map((json) => json.n))
				.sort((a, b) => Number(a) - Number(b)),
		).toEqual([...Array(41).keys()]);
		expect(new Set(ran.map((burst) => burst.id)).size).toBe(ran.length);
		expect(ran.length).toBeGreaterThanOrEqual(6);
		expectRulesKept(ran, quietMs, 8);
	});
});

describe('a holder that died loses nothing', () => {
	/** A holder's execution that died right after storing its message: the burst is started, never waited for. */
	async function deadHolder(table: string, chat: string, leaseMs: number, quietMs = 200) {
		const tables = burstTables(tableRef('public', table));
		const rules = {
			edge: 'trailing' as const,
			quietMs,
			maxWaitMs: 30_000,
			maxItems: 50,
			leaseMs,
		};
		await withBurstTables(pool, tables, true, () =>
			collectItem(
				pool,
				tables,
				{ key: chat, itemJson: JSON.stringify(message(chat, 0).json) },
				'dead-holder',
				rules,
			),
		);
	}

	it('Flush Due Bursts takes over a burst whose holder died while it was open, with every message', async () => {
		const table = uniqueTableName('burst');
		// The joiners must land within the burst's quiet period, a busy machine's delays included.
		await deadHolder(table, 'c8', 1000, 2000);
		const joiners = [await collect(table, 'c8', 1), await collect(table, 'c8', 2)];
		expect(joined(joiners)).toHaveLength(2);
		expect(await run('flush', [{ json: {} }], table, { leaseSeconds: 60 })).toEqual([[]]);
		// Due once the quiet period (2 s) and the lease (1 s) after the last join have passed.
		await sleep(3400);
		const [[taken]] = await run('flush', [{ json: {} }], table, { leaseSeconds: 60 });
		expect(numbers(taken)).toEqual([0, 1, 2]);
		expect(burstOf(taken)).toMatchObject({ key: 'c8', takenOver: true, count: 3 });
		// Taken once: a second flush finds nothing.
		expect(await run('flush', [{ json: {} }], table)).toEqual([[]]);
		const [[completed]] = await run('complete', [taken], table);
		expect(burstOf(completed).completed).toBe(true);
		expect(await leftInTables(table)).toEqual({ bursts: 0, items: 0 });
	});

	it('a burst whose work never completed runs again after its lease, and only the new holder completes it', async () => {
		const table = uniqueTableName('burst');
		const [[first]] = await collect(table, 'c9', 0, { leaseSeconds: 1, quietSeconds: 0.1 });
		await sleep(1200);
		const [[again]] = await run('flush', [{ json: {} }], table);
		expect(burstOf(again).id).toBe(burstOf(first).id);
		expect(burstOf(again).claimId).not.toBe(burstOf(first).claimId);
		expect(burstOf((await run('complete', [first], table))[0][0]).completed).toBe(false);
		expect(burstOf((await run('complete', [again], table))[0][0]).completed).toBe(true);
	});

	it("the next burst of the key takes over the dead holder's burst and runs it first", async () => {
		const table = uniqueTableName('burst');
		await deadHolder(table, 'c10', 300);
		await sleep(700);
		const [[older, own]] = await collect(table, 'c10', 1, { quietSeconds: 0.2 });
		expect(numbers(older)).toEqual([0]);
		expect(burstOf(older).takenOver).toBe(true);
		expect(numbers(own)).toEqual([1]);
	});

	it("Flush Due Bursts with a Burst Key Prefix takes only its own workflow's bursts", async () => {
		const table = uniqueTableName('burst');
		const released = [];
		for (const chat of ['shop:c12', 'ci:c12']) {
			const [[first]] = await collect(table, chat, 0, { quietSeconds: 0.1 });
			released.push(burstOf((await run('release', [first], table))[0][0]).released);
		}
		expect(released).toEqual([true, true]);
		// Before: workflow A's Flush took workflow B's burst too.
		const [shop] = await run('flush', [{ json: {} }], table, { burstKeyPrefix: 'shop:' });
		expect(shop.map((item) => burstOf(item).key)).toEqual(['shop:c12']);
		const [ci] = await run('flush', [{ json: {} }], table, { burstKeyPrefix: 'ci:' });
		expect(ci.map((item) => burstOf(item).key)).toEqual(['ci:c12']);
	});

	it('Release ends the lease at once: the next flush runs the burst again', async () => {
		const table = uniqueTableName('burst');
		const [[first]] = await collect(table, 'c11', 0, { quietSeconds: 0.1 });
		expect(burstOf((await run('release', [first], table))[0][0]).released).toBe(true);
		const [[again]] = await run('flush', [{ json: {} }], table);
		expect(numbers(again)).toEqual([0]);
	});
});

describe('the node around the store', () => {
	it('answers the webhook once the items are stored, long before the burst ends', async () => {
		const table = uniqueTableName('burst');
		const answered: Array<{ at: number; response: unknown }> = [];
		const [[burst]] = await run(
			'collect',
			[message('c12', 0)],
			table,
			{
				quietSeconds: 3,
				options: { answerWhenStored: true },
			},
			(context) =>
				Object.assign(context, {
					sendResponse: async (response: unknown) => answered.push({ at: Date.now(), response }),
				}),
		);
		expect(answered).toEqual([
			{ at: expect.any(Number), response: { statusCode: 200, body: { status: 'received' } } },
		]);
		// Answered before the burst ended (both clocks are this machine's), not when it ran.
		expect(answered[0].at).toBeLessThan(ms(burstOf(burst).endedAt));
		expect(numbers(burst)).toEqual([0]);
	});

	it('Item ID: a redelivered message is collected once, while its burst is open and after it ran', async () => {
		const table = uniqueTableName('burst');
		const withId = { quietSeconds: 1.5, options: { itemId: '={{ $json.n }}' } };
		const send = (n: number) => run('collect', [message('c16', n)], table, withId);
		const holder = send(1);
		await stored(table, 'c16', 1, { value: false });
		const repeats = await Promise.all([send(1), send(2), send(2)]);
		const [[burst]] = await holder;
		expect(numbers(burst)).toEqual([1, 2]);
		const marks = joined(repeats).map((item) => burstOf(item));
		expect(marks.filter((mark) => mark.duplicate === true)).toHaveLength(2);
		expect(marks.filter((mark) => mark.joined === true)).toHaveLength(1);
		await run('complete', [burst], table);
		const [ranAgain, [late]] = await send(2);
		expect(ranAgain).toEqual([]);
		expect(burstOf(late)).toMatchObject({ duplicate: true, key: 'c16', id: null });
		// The IDs are claims in the claim table, which Purge keeps in check.
		const { rows } = await pool.query(`SELECT key FROM ${table} ORDER BY key`);
		expect(rows.map((row) => row.key)).toEqual(['burst:["c16","1"]', 'burst:["c16","2"]']);
	});

	it('creates its tables when missing, and names them when it may not', async () => {
		const table = uniqueTableName('burst');
		await expect(
			run('collect', [message('c13', 0)], table, { options: { createTable: false } }),
		).rejects.toThrow(
			new RegExp(
				`burst tables public\\.${table}_bursts and public\\.${table}_burst_items do not exist`,
			),
		);
		const [[burst]] = await collect(table, 'c13', 0, { quietSeconds: 0.05 });
		expect(numbers(burst)).toEqual([0]);
	});

	it('refuses an item without a burst key, naming it; under the error output the others are still collected', async () => {
		const table = uniqueTableName('burst');
		const items: INodeExecutionData[] = [message('c14', 0), { json: { n: 1 } }];
		await expect(run('collect', items, table)).rejects.toThrow(/Item 1: the burst key is empty/);
		const context = (onError: 'continueErrorOutput' | 'continueRegularOutput') =>
			executeContext(items, {
				parameters: {
					operation: 'collect',
					edge: 'trailing',
					quietSeconds: 0.05,
					maxWaitSeconds: 5,
					maxItems: 5,
					leaseSeconds: 60,
					options: { table },
				},
				perItem: (name, index) => expressions(items[index])[name],
				credentials,
				nodeType: 'idempotencyBurst',
				onError,
			});
		const [toError, joinedOutput] = await node.execute.call(context('continueErrorOutput'));
		expect(toError.map((item) => item.json.error ?? numbers(item))).toEqual(['bad_delivery', [0]]);
		expect(joinedOutput).toEqual([]);
		// Under the regular output the failed item must not reach the work: it leaves on Joined.
		const [work, aside] = await node.execute.call(context('continueRegularOutput'));
		expect(work.map(numbers)).toEqual([[0]]);
		expect(aside.map((item) => item.json.error)).toEqual(['bad_delivery']);
	});

	it('a burst key or Item ID Postgres cannot index or hold (long, NUL, a lone surrogate) is hashed: every item is collected, no two keys merge', async () => {
		const table = uniqueTableName('burst');
		// Incompressible, so past a B-tree entry's ~2,700 bytes; before, the whole execution failed after
		// storing the items ahead of it, and "x\ud800" and "x\udfff" both became "x\ufffd" (one burst).
		const long = randomBytes(3000).toString('hex');
		const items: INodeExecutionData[] = [
			message('c17', 0),
			message(long, 1),
			message('a\u0000b', 2),
			message('x\ud800', 3),
			message('x\udfff', 4),
			{ json: { chat: 'c18', n: long } },
		];
		const [bursts, joinedOutput] = await run('collect', items, table, {
			quietSeconds: 0.05,
			options: { itemId: '={{ $json.n }}' },
		});
		expect(joinedOutput).toEqual([]);
		expect(bursts.map((item) => item.json.error)).toEqual(items.map(() => undefined));
		expect(bursts.map(numbers)).toEqual(items.map((item) => [item.json.n]));
		const keys = bursts.map((item) => burstOf(item).key as string);
		expect(keys[0]).toBe('c17');
		expect(keys[5]).toBe('c18');
		for (const hashed of keys.slice(1, 5)) expect(hashed).toMatch(/^sha256-value:[0-9a-f]{64}$/);
		expect(new Set(keys).size).toBe(6);
	});

	it("Item ID: an item whose ID is empty is refused, even the first; the batch's other items are still collected once", async () => {
		const table = uniqueTableName('burst');
		// Before, item 0's empty ID turned Item ID off for the batch: a redelivered batch ran twice.
		const batch: INodeExecutionData[] = [
			{ json: { chat: 'c19', n: '', text: 'no ID' } },
			message('c19', 1),
			message('c19', 2),
		];
		const send = () =>
			run(
				'collect',
				batch,
				table,
				{ quietSeconds: 0.2, options: { itemId: '={{ $json.n }}' } },
				onError('continueErrorOutput'),
			);
		const [first, firstAside] = await send();
		expect(first.map((item) => item.json.error ?? numbers(item))).toEqual(['bad_delivery', [1, 2]]);
		expect(first[0].json.message).toBe('Item 0: the item ID is empty');
		expect(firstAside.map((item) => burstOf(item).joined)).toEqual([true]);
		const [again, againAside] = await send();
		expect(again.map((item) => item.json.error)).toEqual(['bad_delivery']);
		expect(againAside.map((item) => burstOf(item).duplicate)).toEqual([true, true]);
	});

	it('a database failure mid-execution fails each item once: none also leaves on Joined; under the regular output it is labelled database', async () => {
		const table = uniqueTableName('burst');
		await collect(table, 'warm-up', 0, { quietSeconds: 0.05 }); // the tables, then a fault in them
		const { items: itemsTable } = burstTables(tableRef('public', table));
		await pool.query(`CREATE FUNCTION ${table}_fail() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.item->>'n' = '2' THEN RAISE EXCEPTION 'disk gone'; END IF; RETURN NEW; END $$`);
		await pool.query(
			`CREATE TRIGGER fail BEFORE INSERT ON ${itemsTable} FOR EACH ROW EXECUTE FUNCTION ${table}_fail()`,
		);
		try {
			const batch = [0, 1, 2].map((n) => message('c20', n));
			const [failed, aside] = await run(
				'collect',
				batch,
				table,
				{},
				onError('continueErrorOutput'),
			);
			expect(failed.map((item) => [item.json.error, item.pairedItem])).toEqual(
				[0, 1, 2].map((item) => ['database', { item }]),
			);
			expect(aside).toEqual([]);
			const [work, regular] = await run(
				'collect',
				batch.map((item) => ({ json: { ...item.json, chat: 'c21' } })),
				table,
				{},
				onError('continueRegularOutput'),
			);
			expect(work).toEqual([]);
			expect(regular.map((item) => item.json.error)).toEqual(['database', 'database', 'database']);
		} finally {
			await pool.query(`DROP FUNCTION ${table}_fail() CASCADE`);
		}
	});

	it("a wait that fails stops the execution's other waits and gives back every burst it holds: Flush Due Bursts runs them at once", async () => {
		const table = uniqueTableName('burst');
		await collect(table, 'warm-up', 0, { quietSeconds: 0.05 }); // the tables, then a fault in them
		const { bursts } = burstTables(tableRef('public', table));
		// Taking c31's burst to run fails; c32's wait goes on until the execution stops it.
		await pool.query(`CREATE FUNCTION ${table}_fail() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.key = 'c31' AND NEW.state = 'running' THEN RAISE EXCEPTION 'disk gone'; END IF; RETURN NEW; END $$`);
		await pool.query(
			`CREATE TRIGGER fail BEFORE UPDATE ON ${bursts} FOR EACH ROW EXECUTE FUNCTION ${table}_fail()`,
		);
		try {
			const [failed] = await run(
				'collect',
				[message('c31', 0), message('c32', 1)],
				table,
				{ quietSeconds: 0.3 },
				onError('continueErrorOutput'),
			);
			expect(failed.map((item) => item.json.error)).toEqual(['database', 'database']);
			// Long enough for a wait still going to have taken c32's burst (before: running, for a 300 s lease).
			await sleep(1500);
			const { rows } = await pool.query(
				`SELECT key, lease_until <= clock_timestamp() AS due FROM ${bursts} WHERE key IN ('c31', 'c32') ORDER BY key`,
			);
			expect(rows).toEqual([
				{ key: 'c31', due: true },
				{ key: 'c32', due: true },
			]);
		} finally {
			await pool.query(`DROP FUNCTION ${table}_fail() CASCADE`);
		}
		const [taken] = await run('flush', [{ json: {} }], table, { leaseSeconds: 60 });
		expect(taken.map((item) => [burstOf(item).key, numbers(item)])).toEqual([
			['c31', [0]],
			['c32', [1]],
		]);
	});

	it('Max Items 1: a burst ends as its one item lands, and the next burst opens after it', async () => {
		const table = uniqueTableName('burst');
		const rules = { maxItems: 1, quietSeconds: 5 };
		const [[first]] = await collect(table, 'c22', 0, rules);
		const [[second]] = await collect(table, 'c22', 1, rules);
		for (const burst of [first, second]) {
			expect(burstOf(burst).endedBy).toBe('maxItems');
			// Before, the end was set a quiet period after the arrival, past the next burst's opening.
			expect(burstOf(burst).endedAt).toBe((burstOf(burst).arrivedAt as string[])[0]);
		}
		expect(ms(burstOf(second).openedAt)).toBeGreaterThanOrEqual(ms(burstOf(first).endedAt));
	});

	it('Complete: a burst ID past bigint is refused for its item alone; the valid one beside it is completed', async () => {
		const table = uniqueTableName('burst');
		const [[burst]] = await collect(table, 'c23', 0, { quietSeconds: 0.05 });
		const tooBig = { json: { burst: { id: '9223372036854775808', claimId: 'x' } } };
		const [out] = await run('complete', [tooBig, burst], table, {}, onError('continueErrorOutput'));
		// A mapping the workflow got wrong, as for any malformed ID: before, a database error for every item.
		expect(out.map((item) => item.json.error ?? burstOf(item).completed)).toEqual([
			'configuration',
			true,
		]);
		expect(out[0].json.message).toMatch(/^Item 0: the burst ID is "9223372036854775808"/);
		expect(await leftInTables(table)).toEqual({ bursts: 0, items: 0 });
	});

	it('Complete under the regular output: a database failure is labelled database, and a refused item keeps its own error', async () => {
		// No burst tables under this name: the statement fails for the valid item.
		const table = uniqueTableName('burst');
		const items = [
			{ json: { burst: { id: 'x', claimId: 'c' } } },
			{ json: { burst: { id: '5', claimId: 'c' } } },
		];
		const [out] = await run('complete', items, table, {}, onError('continueRegularOutput'));
		// Before, every item became the database's error, labelled configuration: item 0's own problem was lost.
		expect(out.map((item) => [item.json.error, item.pairedItem])).toEqual([
			['configuration', { item: 0 }],
			['database', { item: 1 }],
		]);
		expect(out[0].json.message).toMatch(/^Item 0: the burst ID is "x"/);
		expect(out[1].json.message).toMatch(/do not exist/);
	});

	it('Complete or Release on a table Collect never used says to set its Schema and Table, not to create tables', async () => {
		const table = uniqueTableName('burst');
		const item = { json: { burst: { id: '5', claimId: 'c' } } };
		for (const operation of ['complete', 'release']) {
			// Before: "turn on Create Table If Missing", an option that is on by default and does nothing here.
			const refused = run(operation, [item], table);
			await expect(refused).rejects.toThrow(/set the Schema and Table the Collect node uses/);
			await expect(run(operation, [item], table)).rejects.not.toThrow(/Create Table If Missing/);
		}
	});

	it('refuses a quiet period or lease past a year, naming it, before any statement', async () => {
		const table = uniqueTableName('burst');
		await expect(collect(table, 'c24', 0, { quietSeconds: 1e300 })).rejects.toThrow(
			'Quiet Period (Seconds) must be a number from 0.01 to 31536000, got 1e+300',
		);
		await expect(collect(table, 'c24', 0, { leaseSeconds: 1e300 })).rejects.toThrow(
			'Lease (Seconds) must be a number from 1 to 31536000, got 1e+300',
		);
		await expect(run('flush', [{ json: {} }], table, { leaseSeconds: 1e300 })).rejects.toThrow(
			'Lease (Seconds) must be a number from 1 to 31536000, got 1e+300',
		);
	});

	it('refuses an operation it does not offer', async () => {
		await expect(run('drop', [message('c15', 0)], uniqueTableName('burst'))).rejects.toThrow(
			/Parameter "operation" is "drop", which this node does not offer/,
		);
	});
});
