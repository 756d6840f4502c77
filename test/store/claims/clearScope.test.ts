/**
 * clearScope on real tables: one scope's keys go in batches with its watermark, a claim still being worked
 * on stays, and the scope is a plain prefix (no LIKE wildcards).
 */
import { clearScope } from '../../../nodes/Idempotency/store/claims/clearScope';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { watermarkRef } from '../../../nodes/Idempotency/store/watermark/watermarkTable';
import { rowsOf } from '../../support/claimTableSql';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { testCredentials, uniqueTableName } from '../../support/database';
import { freshClaimTable, markScope, type TestClaimTable } from '../../support/testClaimTables';

const longAgo = new Date('2000-01-01T00:00:00Z');

async function keysOf(table: TestClaimTable): Promise<string[]> {
	return (await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key as string).sort();
}

describe('clearScope', () => {
	it("deletes the scope's keys in batches and its watermark; other scopes stay", async () => {
		const table = await freshClaimTable();
		await table.claim(['feed:1', 'feed:2', 'feed:3', 'other:1', 'feedback:1']);
		const marks = watermarkRef(table.ref);
		await markScope(table, 'feed', 'number', '5');
		const result = await clearScope(table.pool, table.ref, marks, {
			scope: 'feed',
			keyPrefix: 'feed:',
			batchSize: 2,
		});
		expect(result).toEqual({ deletedKeys: 3, batches: 2, watermarkCleared: true });
		expect(await keysOf(table)).toEqual(['feedback:1', 'other:1']);
		const { rows } = await table.pool.query(`SELECT scope FROM ${marks.qualified}`);
		expect(rows).toEqual([]);
	});

	it('keeps a claim whose lease is running; one whose lease ran out long ago goes', async () => {
		const table = await freshClaimTable();
		await table.claim(['feed:running'], { mode: 'lease', leaseSeconds: 3600 });
		await table.claim(['feed:expired'], { mode: 'lease', leaseSeconds: 60, now: longAgo });
		const result = await clearScope(table.pool, table.ref, watermarkRef(table.ref), {
			scope: 'feed',
			keyPrefix: 'feed:',
			batchSize: 100,
		});
		expect(result).toEqual({ deletedKeys: 1, batches: 1, watermarkCleared: false });
		expect(await keysOf(table)).toEqual(['feed:running']);
	});

	it('reads _ and % in a scope as themselves', async () => {
		const table = await freshClaimTable();
		await table.claim(['a_b:1', 'axb:1', 'a%:1', 'az:1']);
		const clear = (scope: string) =>
			clearScope(table.pool, table.ref, watermarkRef(table.ref), {
				scope,
				keyPrefix: `${scope}:`,
				batchSize: 100,
			});
		expect((await clear('a_b')).deletedKeys).toBe(1);
		expect((await clear('a%')).deletedKeys).toBe(1);
		expect(await keysOf(table)).toEqual(['axb:1', 'az:1']);
	});

	it('on tables that do not exist clears nothing and creates nothing', async () => {
		const pool = await poolFor(testCredentials());
		const ref = tableRef('public', uniqueTableName('absent'));
		const marks = watermarkRef(ref);
		const result = await clearScope(pool, ref, marks, {
			scope: 'feed',
			keyPrefix: 'feed:',
			batchSize: 10,
		});
		expect(result).toEqual({ deletedKeys: 0, batches: 0, watermarkCleared: false });
		const { rows } = await pool.query('SELECT to_regclass($1) AS c, to_regclass($2) AS m', [
			ref.qualified,
			marks.qualified,
		]);
		expect(rows[0]).toEqual({ c: null, m: null });
	});
});
