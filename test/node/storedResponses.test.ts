/**
 * Complete → Store Response, and the claim node handing the stored answer to later repeats: what a
 * Respond to Webhook node replays, through the nodes' own execute() against real Postgres.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { ORIGINAL_LAYOUT_DDL, rowsOf } from '../support/claimTableSql';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

const ORDER = { orderId: 'o_1', status: 'paid', total: 1250 };

function claim(items: INodeExecutionData[], table: string, claimMode = 'lease') {
	return claimNode.execute.call(
		executeContext(items, {
			parameters: { keySource: 'auto', claimMode, leaseSeconds: 300, options: { table } },
			credentials: testCredentials(),
		}),
	);
}

/** Complete after the business step, storing the answer its parameters describe. */
function complete(
	claimed: INodeExecutionData[],
	table: string,
	response: IDataObject = {},
	options: { continueOnFail?: boolean } = {},
) {
	return keyNode.execute.call(
		executeContext(claimed, {
			parameters: {
				operation: 'complete',
				storeResponse: true,
				responseCode: 201,
				responseBodyType: 'json',
				responseJson: ORDER,
				responseHeaders: { entries: [{ name: 'Location', value: '/orders/o_1' }] },
				options: { table },
				...response,
			},
			perItem: (name, index) => {
				const result = claimed[index].json.idempotency as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return result.claimId;
				return undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
			continueOnFail: options.continueOnFail,
		}),
	);
}

const resultOf = (item: INodeExecutionData) => item.json.idempotency as IDataObject;

const EXPECTED = {
	statusCode: 201,
	headers: { location: '/orders/o_1', 'content-type': 'application/json; charset=utf-8' },
	body: '{"orderId":"o_1","status":"paid","total":1250}',
};

describe('Store Response', () => {
	it('Complete outputs the stored answer, and every later repeat leaves Duplicate carrying the same bytes', async () => {
		const table = uniqueTableName('resp');
		const [created] = await claim([webhookItem('{"id":"evt_R1"}')], table);
		const [[completed]] = await complete(created, table);
		expect(resultOf(completed)).toMatchObject({ completed: true, status: 'completed' });
		expect(resultOf(completed).response).toEqual(EXPECTED);

		for (const mode of ['lease', 'once']) {
			const [fresh, duplicate] = await claim([webhookItem('{"id":"evt_R1"}')], table, mode);
			expect(fresh).toEqual([]);
			expect(resultOf(duplicate[0])).toMatchObject({ duplicateKind: 'completed' });
			expect(resultOf(duplicate[0]).response).toEqual(EXPECTED);
		}
		// The body is kept as the exact text answered, key order included.
		const [row] = await rowsOfResponse(table);
		expect(row.response).toEqual(JSON.stringify(EXPECTED));
	});

	it('headers named __proto__ or constructor are stored and come back on the Duplicate item', async () => {
		const table = uniqueTableName('resp');
		const [created] = await claim([webhookItem('{"id":"evt_H"}')], table);
		const entries = [
			{ name: '__proto__', value: 'p' },
			{ name: 'constructor', value: 'c' },
		];
		await complete(created, table, { responseHeaders: { entries } });
		const [, [duplicate]] = await claim([webhookItem('{"id":"evt_H"}')], table);
		const { headers } = resultOf(duplicate).response as { headers: IDataObject };
		expect(Object.keys(headers)).toEqual(['__proto__', 'constructor', 'content-type']);
		expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('p');
		expect(Object.getOwnPropertyDescriptor(headers, 'constructor')?.value).toBe('c');
	});

	it('a batch of repeats carries each key its own response; a key completed without one carries none', async () => {
		const table = uniqueTableName('resp');
		const items = ['a', 'b', 'c'].map((id) => webhookItem(`{"id":"evt_${id}"}`));
		const [created] = await claim(items, table);
		await complete([created[0]], table);
		await complete([created[1]], table, { responseBodyType: 'text', responseText: 'b done' });
		await keyNode.execute.call(
			executeContext([created[2]], {
				parameters: { operation: 'complete', options: { table } },
				perItem: (name) =>
					name === 'key' || name === 'claimId'
						? resultOf(created[2])[name === 'key' ? 'key' : 'claimId']
						: undefined,
				credentials: testCredentials(),
				nodeType: 'idempotencyKey',
			}),
		);
		const [, duplicates] = await claim(items, table);
		expect(duplicates.map((item) => resultOf(item).response)).toEqual([
			EXPECTED,
			{
				statusCode: 201,
				headers: { location: '/orders/o_1', 'content-type': 'text/plain; charset=utf-8' },
				body: 'b done',
			},
			undefined,
		]);
	});

	it('a repeat that arrives while the claim is processing carries no response (nothing is stored yet)', async () => {
		const table = uniqueTableName('resp');
		await claim([webhookItem('{"id":"evt_P"}')], table);
		const [, [duplicate]] = await claim([webhookItem('{"id":"evt_P"}')], table);
		expect(resultOf(duplicate)).toMatchObject({ duplicateKind: 'in_progress' });
		expect(resultOf(duplicate).response).toBeUndefined();
	});

	it('the first stored answer stays: a Complete retried after a lost reply, or with another body, changes nothing', async () => {
		const table = uniqueTableName('resp');
		const [created] = await claim([webhookItem('{"id":"evt_K"}')], table);
		await complete(created, table);
		const [[again]] = await complete(created, table, { responseJson: { orderId: 'o_2' } });
		expect(resultOf(again)).toMatchObject({ completed: true, response: EXPECTED });
		const [, [duplicate]] = await claim([webhookItem('{"id":"evt_K"}')], table);
		expect(resultOf(duplicate).response).toEqual(EXPECTED);
	});

	it('a response over Max Response Size fails its item by name and size; the claim stays processing', async () => {
		const table = uniqueTableName('resp');
		const [created] = await claim([webhookItem('{"id":"evt_big"}')], table);
		const big = { responseJson: { blob: 'x'.repeat(3000) }, maxResponseKib: 2 };
		await expect(complete(created, table, big)).rejects.toThrow(
			/^Item 0: the response to store is 3\.\d KiB \(its body 2\.\d KiB\), over Max Response Size \(2\.0 KiB\)/,
		);
		const [[failed]] = await complete(created, table, big, { continueOnFail: true });
		expect(failed.json).toEqual({
			error: 'configuration',
			message: expect.stringMatching(/^Item 0: the response to store is/),
		});
		expect((await rowsOf(admin, table)).map((row) => row.status)).toEqual(['processing']);
	});

	it('on a table without the response column, Complete → Store Response names the column; the rest works', async () => {
		const table = uniqueTableName('noresp');
		for (const statement of ORIGINAL_LAYOUT_DDL(table)) await admin.query(statement);
		const claimOn = (items: INodeExecutionData[]) =>
			claimNode.execute.call(
				executeContext(items, {
					parameters: {
						keySource: 'auto',
						claimMode: 'lease',
						leaseSeconds: 300,
						options: { table, createTable: false },
					},
					credentials: testCredentials(),
				}),
			);
		const [created] = await claimOn([webhookItem('{"id":"evt_N"}')]);
		await expect(complete(created, table)).rejects.toThrow(/lacks the column response/);
		const [[done]] = await complete(created, table, { storeResponse: false });
		expect(resultOf(done)).toMatchObject({ completed: true });
		expect(resultOf(done).response).toBeUndefined();
		const [, [duplicate]] = await claimOn([webhookItem('{"id":"evt_N"}')]);
		expect(resultOf(duplicate)).toMatchObject({ duplicateKind: 'completed' });
	});

	it('Purge deletes stored responses with their keys', async () => {
		const table = uniqueTableName('resp');
		const [created] = await claim([webhookItem('{"id":"evt_old"}')], table);
		await complete(created, table);
		await admin.query(`UPDATE ${table} SET first_seen = now() - interval '40 days'`);
		const [[report]] = await keyNode.execute.call(
			executeContext([{ json: {} }], {
				parameters: { operation: 'purge', olderThanDays: 30, options: { table } },
				credentials: testCredentials(),
				nodeType: 'idempotencyKey',
			}),
		);
		expect(report.json).toMatchObject({ deleted: 1 });
		expect(await rowsOfResponse(table)).toEqual([]);
	});
});

async function rowsOfResponse(table: string): Promise<Array<{ response: string }>> {
	return (await admin.query(`SELECT response::text AS response FROM ${table}`)).rows;
}
