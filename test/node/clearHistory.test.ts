/**
 * Clear Deduplication History (Idempotency Key node), on real Postgres: it deletes one scope's keys and
 * its watermark, and nothing of any other scope: not a scope that shares its first characters, not one
 * a LIKE pattern would match, not keys made without a scope.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

/** A polled-item claim of `ids` under `scope` ('' = the node's own default scope). */
function claim(table: string, scope: string, ids: string[], extra: IDataObject = {}) {
	const items: INodeExecutionData[] = ids.map((id) => ({ json: { id } }));
	return claimNode.execute.call(
		executeContext(items, {
			parameters: {
				keySource: 'polled',
				keepItemsWhere: 'new',
				options: { table, scope },
				...extra,
			},
			perItem: (name, index) => (name === 'dedupeValue' ? ids[index] : undefined),
			credentials: testCredentials(),
		}),
	);
}

function clear(table: string, scope: unknown, batchSize = 10000) {
	return keyNode.execute.call(
		executeContext([{ json: {} }], {
			parameters: {
				operation: 'clearHistory',
				clearScope: scope,
				batchSize,
				options: { table },
			} as IDataObject,
			credentials: testCredentials(),
			nodeType: 'idempotencyKey',
		}),
	);
}

const keysOf = async (table: string) =>
	(await admin.query(`SELECT key FROM ${table} ORDER BY key`)).rows.map((row) => row.key);
const scopesWithMarks = async (table: string) =>
	(await admin.query(`SELECT scope FROM ${table}_watermarks ORDER BY scope`)).rows.map(
		(row) => row.scope,
	);

it("deletes one scope's keys and its watermark, and nothing of any other scope", async () => {
	const table = uniqueTableName('clear');
	const scopes = ['a_c', 'abc', 'a%c', 'a_c/node', 'a_cd', 'other'];
	for (const scope of scopes) {
		await claim(table, scope, ['1', '2']);
		await claim(table, scope, ['9'], { keepItemsWhere: 'higher' });
	}
	// Keys made without a scope (a webhook's, an expression's that happens to start with the scope).
	await claimNode.execute.call(
		executeContext([{ json: { body: { id: 'x' } } }, { json: { body: { id: 'a_c' } } }], {
			parameters: { keySource: 'auto', options: { table } },
			credentials: testCredentials(),
		}),
	);
	const before = await keysOf(table);

	const [[result]] = await clear(table, 'a_c');

	expect(result.json).toEqual({
		table: `public.${table}`,
		scope: 'a_c',
		deletedKeys: 2,
		batches: 1,
		watermarkCleared: true,
	});
	expect(await keysOf(table)).toEqual(before.filter((key) => !key.startsWith('a_c:')));
	expect(await scopesWithMarks(table)).toEqual(scopes.filter((s) => s !== 'a_c').sort());
	// The next poll of the cleared scope passes its items again, the others' do not.
	expect((await claim(table, 'a_c', ['1']))[0]).toHaveLength(1);
	expect((await claim(table, 'abc', ['1']))[0]).toHaveLength(0);
	expect((await claim(table, 'a_c', ['5'], { keepItemsWhere: 'higher' }))[0]).toHaveLength(1);
});

it('deletes in batches of Batch Size', async () => {
	const table = uniqueTableName('clear');
	await claim(
		table,
		'feed',
		Array.from({ length: 10 }, (_, i) => `id${i}`),
	);
	const [[result]] = await clear(table, 'feed', 3);
	expect(result.json).toMatchObject({ deletedKeys: 10, batches: 4, watermarkCleared: false });
	expect(await keysOf(table)).toEqual([]);
});

it('keeps a claim whose lease is still running, as Purge does', async () => {
	const table = uniqueTableName('clear');
	await claim(table, 'feed', ['done']);
	await claim(table, 'feed', ['working'], { claimMode: 'lease', leaseSeconds: 300 });
	const [[result]] = await clear(table, 'feed');
	expect(result.json).toMatchObject({ deletedKeys: 1 });
	expect(await keysOf(table)).toEqual(['feed:evt:working']);
});

it.each([
	['', /^Scope is empty\. Clear Deduplication History deletes one scope and never a whole table/],
	['   ', /^Scope is empty/],
	[undefined, /^Scope is empty/],
	['evt', /^Scope "evt" is refused: keys made without a Scope start with "evt:" too/],
	['sha256', /^Scope "sha256" is refused/],
	['two words', /the scope "two words" must be 1–100 characters with no spaces/],
])('refuses the scope %p before touching the table', async (scope, message) => {
	const table = uniqueTableName('clear');
	await claim(table, 'feed', ['1']);
	const error = await clear(table, scope).catch((e: unknown) => e);
	expect(error).toBeInstanceOf(NodeOperationError);
	expect((error as Error).message).toMatch(message);
	expect(await keysOf(table)).toEqual(['feed:evt:1']);
});

it('on a table that does not exist it deletes nothing and creates nothing', async () => {
	const table = uniqueTableName('clear_none');
	const [[result]] = await clear(table, 'feed');
	expect(result.json).toMatchObject({ deletedKeys: 0, batches: 0, watermarkCleared: false });
	const { rows } = await admin.query('SELECT to_regclass($1) AS a, to_regclass($2) AS b', [
		table,
		`${table}_watermarks`,
	]);
	expect(rows[0]).toEqual({ a: null, b: null });
});
