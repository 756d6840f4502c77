/**
 * Idempotency Key's Complete With Write, as a workflow runs it: the claim node's item in, the user's SQL and
 * its parameters, one transaction per item; each item's failure named and its claim left retryable.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { rowsOf } from '../support/claimTableSql';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

function claim(items: INodeExecutionData[], table: string) {
	return claimNode.execute.call(
		executeContext(items, {
			parameters: { keySource: 'auto', claimMode: 'lease', leaseSeconds: 300, options: { table } },
			credentials: testCredentials(),
		}),
	);
}

/** Complete With Write after the claim node, key and claim ID mapped from its items as the template does. */
function writeAndComplete(
	claimed: INodeExecutionData[],
	table: string,
	query: string,
	parameters: (json: IDataObject) => unknown,
	options: { continueOnFail?: boolean; extra?: IDataObject } = {},
) {
	return keyNode.execute.call(
		executeContext(claimed, {
			parameters: { operation: 'completeWithWrite', query, options: { table }, ...options.extra },
			perItem: (name, index) => {
				const json = claimed[index].json;
				const result = json.idempotency as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return result.claimId;
				if (name === 'queryParameters') return parameters(json);
				return undefined;
			},
			credentials: testCredentials(),
			continueOnFail: options.continueOnFail,
		}),
	);
}

async function ordersTable(): Promise<{
	orders: string;
	insert: string;
	rows: () => Promise<unknown[]>;
}> {
	const orders = uniqueTableName('orders');
	await admin.query(`CREATE TABLE ${orders} (event_id text PRIMARY KEY, amount integer NOT NULL)`);
	return {
		orders,
		insert: `INSERT INTO ${orders} (event_id, amount) VALUES ($1, $2) RETURNING event_id`,
		rows: async () =>
			(await admin.query(`SELECT event_id, amount FROM ${orders} ORDER BY event_id`)).rows,
	};
}

const bodyOf = (json: IDataObject) => json.body as IDataObject;

describe('Idempotency Key: Complete With Write', () => {
	it('writes each item with its parameters and completes its key; a repeat is a completed duplicate', async () => {
		const table = uniqueTableName('key');
		const { insert, rows } = await ordersTable();
		const [created] = await claim(
			[webhookItem('{"id":"evt_1","amount":5}'), webhookItem('{"id":"evt_2","amount":7}')],
			table,
		);
		const [out] = await writeAndComplete(created, table, insert, (json) => [
			bodyOf(json).id,
			bodyOf(json).amount,
		]);
		expect(out.map((item) => item.json.idempotency)).toEqual([
			expect.objectContaining({
				key: 'evt:evt_1',
				operation: 'completeWithWrite',
				completed: true,
				status: 'completed',
				write: { rowCount: 1, rows: [{ event_id: 'evt_1' }] },
			}),
			expect.objectContaining({ key: 'evt:evt_2', completed: true }),
		]);
		expect(out.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(await rows()).toEqual([
			{ event_id: 'evt_1', amount: 5 },
			{ event_id: 'evt_2', amount: 7 },
		]);
		const [, duplicate] = await claim([webhookItem('{"id":"evt_1","amount":5}')], table);
		expect(duplicate[0].json.idempotency).toMatchObject({ duplicateKind: 'completed' });
	});

	it('a failed write fails only its item, naming it; its claim stays held and the others commit', async () => {
		const table = uniqueTableName('key');
		const { insert, rows } = await ordersTable();
		const [created] = await claim(
			[webhookItem('{"id":"evt_1","amount":5}'), webhookItem('{"id":"evt_2"}')],
			table,
		);
		// evt_2 has no amount: NOT NULL refuses its row.
		const [out] = await writeAndComplete(
			created,
			table,
			insert,
			(json) => [bodyOf(json).id, bodyOf(json).amount ?? null],
			{ continueOnFail: true },
		);
		expect(out).toEqual([
			expect.objectContaining({ pairedItem: { item: 0 } }),
			{
				json: {
					error: 'write_failed',
					message: expect.stringMatching(
						/^Item 1: the write failed: null value in column "amount".*the claim is still held/,
					),
				},
				pairedItem: { item: 1 },
			},
		]);
		expect(await rows()).toEqual([{ event_id: 'evt_1', amount: 5 }]);
		const claims = await rowsOf(admin, table);
		expect(claims.map(({ key, status }) => ({ key, status }))).toEqual([
			{ key: 'evt:evt_1', status: 'completed' },
			{ key: 'evt:evt_2', status: 'processing' },
		]);
	});

	it('a deferred constraint that fails at COMMIT fails only its item as write_failed; the others commit', async () => {
		const table = uniqueTableName('key');
		const orders = uniqueTableName('orders');
		await admin.query(
			// Named after its table: a constraint's index name is unique in the schema, which a shared server keeps.
			`CREATE TABLE ${orders} (ref text, CONSTRAINT ${orders}_one_ref UNIQUE (ref) DEFERRABLE INITIALLY DEFERRED)`,
		);
		await admin.query(`INSERT INTO ${orders} VALUES ('taken')`);
		const [created] = await claim(
			[webhookItem('{"id":"evt_1","ref":"taken"}'), webhookItem('{"id":"evt_2","ref":"free"}')],
			table,
		);
		const [out] = await writeAndComplete(
			created,
			table,
			`INSERT INTO ${orders} VALUES ($1)`,
			(json) => [bodyOf(json).ref],
			{ continueOnFail: true },
		);
		// Before the fix: the COMMIT's error failed both items as a database error naming neither.
		expect(
			out.map((item) => item.json.error ?? (item.json.idempotency as IDataObject).key),
		).toEqual(['write_failed', 'evt:evt_2']);
		expect(out[0].json.message).toMatch(
			/^Item 0: the write failed: duplicate key value violates unique constraint "[a-z0-9_]+_one_ref".*claim is still held/,
		);
		const claims = await rowsOf(admin, table);
		expect(claims.map(({ key, status }) => ({ key, status }))).toEqual([
			{ key: 'evt:evt_1', status: 'processing' },
			{ key: 'evt:evt_2', status: 'completed' },
		]);
	});

	it('two items of one event write nothing: the first would complete the claim and the second be refused', async () => {
		const table = uniqueTableName('key');
		const lines = uniqueTableName('lines');
		await admin.query(`CREATE TABLE ${lines} (event_id text, line integer)`);
		const [created] = await claim(
			[webhookItem('{"id":"evt_1"}'), webhookItem('{"id":"evt_2"}')],
			table,
		);
		// evt_1's order split into two line items, both paired with the event, as a Split Out node gives.
		const split = [1, 2].map((line) => ({ ...created[0], json: { ...created[0].json, line } }));
		const [out] = await writeAndComplete(
			[...split, created[1]],
			table,
			`INSERT INTO ${lines} VALUES ($1, $2)`,
			(json) => [bodyOf(json).id, json.line ?? 1],
			{ continueOnFail: true },
		);
		expect(out.map((item) => item.json.error ?? item.json.idempotency)).toEqual([
			'configuration',
			'configuration',
			expect.objectContaining({ key: 'evt:evt_2', completed: true }),
		]);
		expect(out[0].json.message).toMatch(
			/^Item 0: the key "evt:evt_1" is on items 0, 1 of this execution: .* none is written/,
		);
		// Before the fix: line 1 written and evt_1 completed, line 2 refused as not_held and lost.
		expect((await admin.query(`SELECT event_id, line FROM ${lines} ORDER BY 1, 2`)).rows).toEqual([
			{ event_id: 'evt_2', line: 1 },
		]);
		const claims = await rowsOf(admin, table);
		expect(claims.map(({ key, status }) => ({ key, status }))).toEqual([
			{ key: 'evt:evt_1', status: 'processing' },
			{ key: 'evt:evt_2', status: 'completed' },
		]);
	});

	it('without a Continue setting a failed write stops the node with the item named', async () => {
		const table = uniqueTableName('key');
		const { orders } = await ordersTable();
		const [created] = await claim([webhookItem('{"id":"evt_1"}')], table);
		await expect(
			writeAndComplete(created, table, `INSERT INTO ${orders} (nope) VALUES ($1)`, (json) => [
				bodyOf(json).id,
			]),
		).rejects.toThrow(/^Item 0: the write failed: column "nope" of relation/);
	});

	it('a claim another execution holds now: nothing written, the item leaves as not_held', async () => {
		const table = uniqueTableName('key');
		const { insert, rows } = await ordersTable();
		const [created] = await claim([webhookItem('{"id":"evt_1","amount":1}')], table);
		const stale = [
			{
				...created[0],
				json: {
					...created[0].json,
					idempotency: { key: 'evt:evt_1', claimId: 'AAAAAAAAAAAAAAAA' },
				},
			},
		];
		const [[out]] = await writeAndComplete(stale, table, insert, () => ['evt_1', 1], {
			continueOnFail: true,
		});
		expect(out.json).toEqual({
			error: 'not_held',
			message: expect.stringMatching(
				/^Item 0: the claim on key "evt:evt_1" is no longer this execution's: another execution holds it/,
			),
		});
		expect(await rows()).toEqual([]);
	});

	it('refuses transaction control, session changes, a missing Claim ID and parameters that are not a list, each by item', async () => {
		const table = uniqueTableName('key');
		const { insert, orders } = await ordersTable();
		const [created] = await claim([webhookItem('{"id":"evt_1","amount":1}')], table);
		const cases: Array<[string, (json: IDataObject) => unknown, IDataObject | undefined, RegExp]> =
			[
				['/* note */ COMMIT', () => [], undefined, /controls the transaction/],
				[' \n-- first\nrollback', () => [], undefined, /controls the transaction/],
				// Before the fix these ran: reported completed, the claim in fact rolled back or committed bare.
				[';;ROLLBACK', () => [], undefined, /controls the transaction/],
				['; COMMIT', () => [], undefined, /controls the transaction/],
				['/* a /* nested */ b */ ROLLBACK', () => [], undefined, /controls the transaction/],
				// Before the fix these committed, and the setting stayed on the pooled connection.
				['SET synchronous_commit = off', () => [], undefined, /changes the session/],
				['/* x */ set session role postgres', () => [], undefined, /changes the session/],
				['RESET ALL', () => [], undefined, /changes the session/],
				['DEALLOCATE ALL', () => [], undefined, /changes the session/],
				['PREPARE p AS SELECT 1', () => [], undefined, /changes the session/],
				['LISTEN orders', () => [], undefined, /changes the session/],
				// Before the fix COPY … FROM STDIN waited for ever, holding the claim row's lock.
				[` copy ${orders} FROM STDIN`, () => [], undefined, /the Query is a COPY/],
				['', () => [], undefined, /the Query is empty/],
				[insert, () => 'evt_1, 1', undefined, /Query Parameters are not a list/],
				[
					insert,
					() => '["evt_1", 1]',
					{ claimId: '' },
					/Claim ID is empty\. Complete With Write writes only/,
				],
			];
		for (const [query, parameters, item, message] of cases) {
			const items = item
				? [
						{
							...created[0],
							json: { ...created[0].json, idempotency: { key: 'evt:evt_1', ...item } },
						},
					]
				: created;
			const [[out]] = await writeAndComplete(items, table, query, parameters, {
				continueOnFail: true,
			});
			expect(out.json).toEqual({ error: 'configuration', message: expect.stringMatching(message) });
		}
		// None of them completed the claim.
		expect((await rowsOf(admin, table))[0]).toMatchObject({ status: 'processing' });
	});

	it('parameters as JSON text work, and Store Response stores the answer with the write', async () => {
		const table = uniqueTableName('key');
		const { insert, rows } = await ordersTable();
		const [created] = await claim([webhookItem('{"id":"evt_1","amount":3}')], table);
		const [[out]] = await writeAndComplete(created, table, insert, () => '["evt_1", 3]', {
			extra: { storeResponse: true, responseBodyType: 'json', responseJson: '{"ok":true}' },
		});
		expect(out.json.idempotency).toMatchObject({
			completed: true,
			response: { statusCode: 200, body: '{"ok":true}' },
		});
		expect(await rows()).toEqual([{ event_id: 'evt_1', amount: 3 }]);
		const [, duplicate] = await claim([webhookItem('{"id":"evt_1","amount":3}')], table);
		expect(duplicate[0].json.idempotency).toMatchObject({ response: { body: '{"ok":true}' } });
	});
});
