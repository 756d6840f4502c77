/**
 * checkScopeKeeps: a polled scope keeps one kind of history (keys, or a watermark of numbers or dates),
 * and a poll in another mode is refused before it starts that history afresh.
 */
import { WatermarkError } from '../../../nodes/Idempotency/errors';
import { checkScopeKeeps } from '../../../nodes/Idempotency/store/claims/scopeHistory';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { watermarkRef } from '../../../nodes/Idempotency/store/watermark/watermarkTable';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { testCredentials, uniqueTableName } from '../../support/database';
import { freshClaimTable, markScope } from '../../support/testClaimTables';

describe('checkScopeKeeps', () => {
	it('a scope with nothing kept (no tables even) takes any mode', async () => {
		const pool = await poolFor(testCredentials());
		const ref = tableRef('public', uniqueTableName('absent'));
		for (const wanted of ['keys', 'number', 'date'] as const)
			await expect(
				checkScopeKeeps(pool, ref, watermarkRef(ref), 'feed', 'feed:', wanted),
			).resolves.toBeUndefined();
	});

	it('a scope that keeps keys refuses a watermark mode, naming both modes; other scopes are free', async () => {
		const table = await freshClaimTable();
		await table.claim(['feed:1']);
		const marks = watermarkRef(table.ref);
		await expect(
			checkScopeKeeps(table.pool, table.ref, marks, 'feed', 'feed:', 'keys'),
		).resolves.toBeUndefined();
		const refused = checkScopeKeeps(table.pool, table.ref, marks, 'feed', 'feed:', 'number');
		await expect(refused).rejects.toThrow(WatermarkError);
		await expect(refused).rejects.toThrow(
			/the scope "feed" holds the history of Keep Items Where "Value Is New", so "Value Is Higher than Any Previous Value" would start it fresh/,
		);
		await expect(
			checkScopeKeeps(table.pool, table.ref, marks, 'fee', 'fee:', 'date'),
		).resolves.toBeUndefined();
	});

	it('a scope with a watermark refuses Value Is New, and leaves the other kind to the statement that compares', async () => {
		const table = await freshClaimTable();
		const marks = watermarkRef(table.ref);
		await markScope(table, 'feed', 'date', '2026-01-01T00:00:00Z');
		await expect(
			checkScopeKeeps(table.pool, table.ref, marks, 'feed', 'feed:', 'keys'),
		).rejects.toThrow(/holds the history of Keep Items Where "Value Is a Date Later/);
		for (const wanted of ['date', 'number'] as const)
			await expect(
				checkScopeKeeps(table.pool, table.ref, marks, 'feed', 'feed:', wanted),
			).resolves.toBeUndefined();
	});
});
