import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { rowsOf } from '../support/claimTableSql';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

/** The status of every row of the table (a compact table derives it from lease_until). */
const statusRows = async (table: string) =>
	(await rowsOf(admin, table)).map(({ status }) => ({ status }));

function claim(items: INodeExecutionData[], table: string) {
	return claimNode.execute.call(
		executeContext(items, {
			parameters: { keySource: 'auto', claimMode: 'lease', leaseSeconds: 300, options: { table } },
			credentials: testCredentials(),
		}),
	);
}

function runKeyNode(items: INodeExecutionData[], parameters: IDataObject) {
	return keyNode.execute.call(
		executeContext(items, { parameters, credentials: testCredentials() }),
	);
}

/** The Key node after a business step: key and claim id mapped from the claim node's item, as in the template. */
function settle(
	operation: 'complete' | 'release',
	claimed: INodeExecutionData[],
	table: string,
	overrideClaimId?: string,
) {
	return keyNode.execute.call(
		executeContext(claimed, {
			parameters: { operation, options: { table } },
			perItem: (name, index) => {
				const result = claimed[index].json.idempotency as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return overrideClaimId ?? result.claimId;
				return undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
		}),
	);
}

describe('Idempotency Key node', () => {
	it('Complete: later deliveries are completed duplicates', async () => {
		const table = uniqueTableName('key');
		const [created] = await claim([webhookItem('{"id":"evt_C"}')], table);
		const [[completed]] = await settle('complete', created, table);
		expect(completed.json.idempotency).toMatchObject({
			key: 'evt:evt_C',
			operation: 'complete',
			completed: true,
		});
		expect(completed.pairedItem).toEqual({ item: 0 });
		const [, duplicate] = await claim([webhookItem('{"id":"evt_C"}')], table);
		expect(duplicate[0].json.idempotency).toMatchObject({ duplicateKind: 'completed' });
	});

	it('Release: the provider’s next retry is New again', async () => {
		const table = uniqueTableName('key');
		const [created] = await claim([webhookItem('{"id":"evt_R"}')], table);
		const [[released]] = await settle('release', created, table);
		expect(released.json.idempotency).toMatchObject({ released: true });
		const [again] = await claim([webhookItem('{"id":"evt_R"}')], table);
		expect(again).toHaveLength(1);
	});

	it('a claim id that no longer holds the key settles nothing', async () => {
		const table = uniqueTableName('key');
		const [created] = await claim([webhookItem('{"id":"evt_S"}')], table);
		const [[result]] = await settle('release', created, table, 'stale-claim-id');
		expect(result.json.idempotency).toMatchObject({ released: false });
		expect(await statusRows(table)).toEqual([{ status: 'processing' }]);
	});

	it("each output says what the claim's row is now, in place of the claim's processing", async () => {
		const table = uniqueTableName('key');
		const statusAfter = async (
			operation: 'complete' | 'release',
			items: INodeExecutionData[],
			claimId?: string,
		) => (await settle(operation, items, table, claimId))[0].map((item) => item.json.idempotency);
		const [created] = await claim(
			[
				webhookItem('{"id":"evt_done"}'),
				webhookItem('{"id":"evt_fail"}'),
				webhookItem('{"id":"evt_held"}'),
			],
			table,
		);
		const [done, failed, held] = created.map((item) => [item]);
		expect(created.map((item) => (item.json.idempotency as { status: string }).status)).toEqual([
			'processing',
			'processing',
			'processing',
		]);
		expect(await statusAfter('complete', done)).toEqual([
			expect.objectContaining({ completed: true, status: 'completed' }),
		]);
		expect(await statusAfter('release', failed)).toEqual([
			expect.objectContaining({ released: true, status: 'released' }),
		]);
		// Released again: the row is gone, nothing was released this time.
		expect(await statusAfter('release', failed)).toEqual([
			expect.objectContaining({ released: false, status: 'not_found' }),
		]);
		// A stale claim ID leaves the row to whoever holds it.
		expect(await statusAfter('release', held, 'stale-claim-id')).toEqual([
			expect.objectContaining({ released: false, status: 'processing' }),
		]);
		expect(await statusAfter('complete', held, 'stale-claim-id')).toEqual([
			expect.objectContaining({ completed: false, status: 'processing' }),
		]);
		// A completed claim is never released.
		expect(await statusAfter('release', done)).toEqual([
			expect.objectContaining({ released: false, status: 'completed' }),
		]);
		expect((await statusRows(table)).map((row) => row.status).sort()).toEqual([
			'completed',
			'processing',
		]);
	});

	it('an empty key fails naming the item', async () => {
		const table = uniqueTableName('key');
		const parameters = { operation: 'complete', key: '', claimId: '', options: { table } };
		await expect(runKeyNode([{ json: {} }], parameters)).rejects.toThrow(
			/^Item 0: the key is empty/,
		);
	});

	it('Purge: one output item with the number of deleted rows', async () => {
		const table = uniqueTableName('key');
		await claim([webhookItem('{"id":"fresh"}')], table);
		await admin.query(
			`INSERT INTO ${table} (key, first_seen) SELECT 'old' || i, now() - interval '40 days' FROM generate_series(1, 12) i`,
		);
		const [[report], ...rest] = await runKeyNode([{ json: {} }, { json: {} }], {
			operation: 'purge',
			olderThanDays: 30,
			batchSize: 5,
			options: { table },
		});
		expect(rest).toEqual([]);
		expect(report.json).toMatchObject({
			deleted: 12,
			batches: 3,
			olderThanDays: 30,
			table: `public.${table}`,
		});
		expect((await admin.query(`SELECT key FROM ${table}`)).rows).toEqual([{ key: 'evt:fresh' }]);
	});

	it('Release with an empty Claim ID is refused, naming the item; the claim stays', async () => {
		const table = uniqueTableName('key');
		const [created] = await claim([webhookItem('{"id":"evt_R"}')], table);
		await expect(settle('release', created, table, '')).rejects.toThrow(
			/^Item 0: the Claim ID is empty/,
		);
		expect(await statusRows(table)).toEqual([{ status: 'processing' }]);
	});

	it.each(['complete', 'release'] as const)(
		'%s: an item that cannot be settled fails as { error: "configuration", message } with its pairedItem under either Continue setting; the others are settled',
		async (operation) => {
			const table = uniqueTableName('key');
			const [created] = await claim(
				[webhookItem('{"id":"evt_ok"}'), webhookItem('{"id":"evt_bad"}')],
				table,
			);
			// Item 1 maps an empty key (Complete) or an empty Claim ID (Release).
			const emptied = operation === 'complete' ? 'key' : 'claimId';
			for (const onError of ['continueRegularOutput', 'continueErrorOutput'] as const) {
				const [out] = await keyNode.execute.call(
					executeContext(created, {
						parameters: { operation, options: { table } },
						perItem: (name, index) => {
							if (index === 1 && name === emptied) return '';
							const result = created[index].json.idempotency as IDataObject;
							return name === 'key' || name === 'claimId' ? result[name] : undefined;
						},
						credentials: testCredentials(),
						nodeName: 'Idempotency Key',
						nodeType: 'idempotencyKey',
						onError,
					}),
				);
				const failed = out.find((item) => 'error' in item.json);
				expect(failed).toEqual({
					json: {
						error: 'configuration',
						message: expect.stringMatching(
							operation === 'complete'
								? /^Item 1: the key is empty/
								: /^Item 1: the Claim ID is empty/,
						),
					},
					pairedItem: { item: 1 },
				});
				expect(out.filter((item) => item !== failed).map((item) => item.pairedItem)).toEqual([
					{ item: 0 },
				]);
			}
		},
	);

	it('Purge takes Older Than as text from an expression ("30"), and names a bad value', async () => {
		const table = uniqueTableName('key');
		await claim([webhookItem('{"id":"kept"}')], table);
		const purge = (olderThanDays: string) =>
			runKeyNode([{ json: {} }], {
				operation: 'purge',
				olderThanDays,
				batchSize: 100,
				options: { table },
			});
		const [[report]] = await purge('30');
		expect(report.json).toMatchObject({ deleted: 0, olderThanDays: 30 });
		await expect(purge('thirty')).rejects.toThrow(
			'Older Than (Days) must be a number from 0 to 36500, got "thirty"',
		);
	});

	it.each(['complete', 'release', 'purge', 'listStuck'])(
		'%s: a setting that fails before any SQL is a node error under Stop Workflow; under either Continue setting every item fails on the first output, carrying the error, never as the untouched input',
		async (operation) => {
			const items = [{ json: { idempotency: { key: 'evt:k', claimId: 'c1' } } }, { json: {} }];
			const parameters = {
				operation,
				key: 'evt:k',
				claimId: 'c1',
				olderThanDays: 30,
				batchSize: 100,
				options: { table: 'bad-name!' },
			};
			const keyNodeWith = (
				onError: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput',
			) =>
				keyNode.execute.call(
					executeContext(items, { parameters, credentials: testCredentials(), onError }),
				);
			await expect(keyNodeWith('stopWorkflow')).rejects.toThrow(/bad-name!/);
			for (const onError of ['continueRegularOutput', 'continueErrorOutput'] as const) {
				expect(await keyNodeWith(onError)).toEqual([
					[0, 1].map((index) => ({
						json: {
							error: 'configuration',
							message: expect.stringMatching(/bad-name!/),
						},
						pairedItem: { item: index },
					})),
				]);
			}
		},
	);
});
