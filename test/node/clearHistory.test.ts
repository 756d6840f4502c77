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

function clear(
	table: string,
	scope: unknown,
	batchSize = 10000,
	items: INodeExecutionData[] = [{ json: {} }],
) {
	return keyNode.execute.call(
		executeContext(items, {
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
	(
		await admin
			.query(`SELECT scope FROM ${table}_watermarks ORDER BY scope`)
			.catch(() => ({ rows: [] }))
	).rows.map((row: { scope: string }) => row.scope);

it("deletes one scope's keys and its watermark, and nothing of any other scope", async () => {
	const table = uniqueTableName('clear');
	const scopes = ['a_c', 'abc', 'a%c', 'a_c/node', 'a_cd', 'other'];
	for (const scope of scopes) await claim(table, scope, ['1', '2']);
	// A scope keeps keys or a watermark, never both through the node; written here to show Clear takes both.
	await claim(table, 'marks-table', ['1'], { keepItemsWhere: 'higher' });
	const marked = scopes.filter((scope) => scope !== 'other');
	await admin.query(
		`INSERT INTO ${table}_watermarks (scope, kind, mark) SELECT unnest($1::text[]), 'number', '9'`,
		[marked],
	);
	// Keys made without a scope (a webhook's, an expression's that happens to start with the scope).
	await claimNode.execute.call(
		executeContext([{ json: { body: { id: 'x' } } }, { json: { body: { id: 'a_c' } } }], {
			parameters: { keySource: 'auto', options: { table } },
			credentials: testCredentials(),
		}),
	);
	const before = await keysOf(table);

	const [[result]] = await clear(table, 'a_c');

	expect(result.json.idempotency).toEqual({
		operation: 'clearHistory',
		table: `public.${table}`,
		scope: 'a_c',
		deletedKeys: 2,
		batches: 1,
		watermarkCleared: true,
	});
	expect(await keysOf(table)).toEqual(before.filter((key) => !key.startsWith('a_c:')));
	expect(await scopesWithMarks(table)).toEqual(
		[...marked.filter((s) => s !== 'a_c'), 'marks-table'].sort(),
	);
	// The next poll of the cleared scope passes its items again, the others' do not.
	expect((await claim(table, 'a_c', ['1']))[0]).toHaveLength(1);
	expect((await claim(table, 'other', ['1']))[0]).toHaveLength(0);
});

it('passes its input items on, as Remove Duplicates does, each with what was cleared; it clears once', async () => {
	const table = uniqueTableName('clear');
	await claim(table, 'feed', ['1', '2', '3']);
	const items = [
		{ json: { run: 'a' } },
		{ json: { run: 'b' }, binary: { data: { data: 'eA==', mimeType: 'text/plain' } } },
	];
	const [out] = await clear(table, 'feed', 10000, items);
	expect(out.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
	expect(out.map((item) => item.json.run)).toEqual(['a', 'b']);
	expect(out[1].binary).toEqual(items[1].binary);
	for (const item of out)
		expect(item.json.idempotency).toMatchObject({ scope: 'feed', deletedKeys: 3 });
	expect(await keysOf(table)).toEqual([]);
});

it('switching Keep Items Where on a scope is refused, as Remove Duplicates refuses it, until the scope is cleared', async () => {
	const table = uniqueTableName('switch');
	const refusal = (kept: string, wanted: string) =>
		`the scope "feed" holds the history of Keep Items Where "${kept}", so "${wanted}" would start it fresh and pass items again: ` +
		'run Clear Deduplication History on the scope first, or give this node another Scope';
	const NEW = 'Value Is New';
	const HIGHER = 'Value Is Higher than Any Previous Value';
	const LATER = 'Value Is a Date Later than Any Previous Date';
	await claim(table, 'feed', ['1', '2']);
	await expect(claim(table, 'feed', ['3'], { keepItemsWhere: 'higher' })).rejects.toThrow(
		refusal(NEW, HIGHER),
	);
	await expect(
		claim(table, 'feed', ['2024-08-09T00:00:00Z'], { keepItemsWhere: 'later' }),
	).rejects.toThrow(refusal(NEW, LATER));
	expect(await scopesWithMarks(table)).toEqual([]);

	await clear(table, 'feed');
	expect((await claim(table, 'feed', ['3'], { keepItemsWhere: 'higher' }))[0]).toHaveLength(1);
	await expect(claim(table, 'feed', ['4'])).rejects.toThrow(refusal(HIGHER, NEW));
	await expect(
		claim(table, 'feed', ['2024-08-09T00:00:00Z'], { keepItemsWhere: 'later' }),
	).rejects.toThrow(/holds a watermark of numbers/);
	expect(await keysOf(table)).toEqual([]);
	// Another scope is free to keep either.
	expect((await claim(table, 'other', ['4']))[0]).toHaveLength(1);
});

it('deletes in batches of Batch Size', async () => {
	const table = uniqueTableName('clear');
	await claim(
		table,
		'feed',
		Array.from({ length: 10 }, (_, i) => `id${i}`),
	);
	const [[result]] = await clear(table, 'feed', 3);
	expect(result.json.idempotency).toMatchObject({
		deletedKeys: 10,
		batches: 4,
		watermarkCleared: false,
	});
	expect(await keysOf(table)).toEqual([]);
});

it('keeps a claim whose lease is still running, as Purge does', async () => {
	const table = uniqueTableName('clear');
	await claim(table, 'feed', ['done']);
	await claim(table, 'feed', ['working'], { claimMode: 'lease', leaseSeconds: 300 });
	const [[result]] = await clear(table, 'feed');
	expect(result.json.idempotency).toMatchObject({ deletedKeys: 1 });
	expect(await keysOf(table)).toEqual(['feed:evt:working']);
});

it.each([
	['', /^Scope is empty\. Clear Deduplication History deletes one scope and never a whole table/],
	['   ', /^Scope is empty/],
	[undefined, /^Scope is empty/],
	['evt', /^Scope "evt" is refused: keys made without a Scope start with "evt:" too/],
	['sha256', /^Scope "sha256" is refused/],
	// Before, it deleted every Burst Item-ID claim, and redelivered messages were collected twice.
	[
		'burst',
		/^Scope "burst" is refused: Idempotency Burst's Item-ID claims start with "burst:" too/,
	],
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
	expect(result.json.idempotency).toMatchObject({
		deletedKeys: 0,
		batches: 0,
		watermarkCleared: false,
	});
	const { rows } = await admin.query('SELECT to_regclass($1) AS a, to_regclass($2) AS b', [
		table,
		`${table}_watermarks`,
	]);
	expect(rows[0]).toEqual({ a: null, b: null });
});
