import { purgeKeys } from '../../../nodes/Idempotency/store/claims/purgeKeys';
import { createKeyAndFirstSeenTable, rowsOf } from '../../support/claimTableSql';
import { freshClaimTable, originalLayoutClaimTable } from '../../support/testClaimTables';
import { testPool, uniqueTableName } from '../../support/database';

const now = new Date('2026-03-01T00:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);

describe('purge', () => {
	it('deletes keys first seen before the cutoff, in batches, and keeps the fresh ones', async () => {
		const table = await freshClaimTable();
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen)
			 SELECT 'old:' || i, $1::timestamptz - make_interval(mins => i) FROM generate_series(1, 25) i
			 UNION ALL SELECT 'fresh:' || i, $2::timestamptz FROM generate_series(1, 5) i`,
			[daysAgo(31), daysAgo(29)],
		);
		const result = await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now });
		expect(result).toEqual({ deleted: 25, batches: 3, cutoff: daysAgo(30) });
		const left = (await rowsOf(table.pool, table.ref.qualified)).map((r) => r.key as string);
		expect(left.sort()).toEqual(['fresh:1', 'fresh:2', 'fresh:3', 'fresh:4', 'fresh:5']);
		expect(await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now })).toMatchObject({
			deleted: 0,
			batches: 1,
		});
	});

	it('never deletes a claim still being worked on, however old its key; expired leases and completed keys go', async () => {
		const table = await originalLayoutClaimTable();
		const inSeconds = (seconds: number) => new Date(now.getTime() + seconds * 1000);
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen, status, lease_until) VALUES
			 ('live', $1, 'processing', $2), ('expired', $1, 'processing', $3), ('done', $1, 'completed', NULL)`,
			[daysAgo(40), inSeconds(120), inSeconds(-1)],
		);
		const result = await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now });
		expect(result.deleted).toBe(2);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual(['live']);
	});

	it('a processing claim of the original layout with no lease at all has ended (as its takeover and List Stuck Claims read it): an old one goes', async () => {
		const table = await originalLayoutClaimTable();
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen, status, lease_until) VALUES
			 ('no-lease', $1, 'processing', NULL), ('no-lease:young', $2, 'processing', NULL)`,
			[daysAgo(40), daysAgo(1)],
		);
		const result = await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now });
		expect(result.deleted).toBe(1);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual([
			'no-lease:young',
		]);
	});

	it('purges a table with only key and first_seen (no claim there is still being worked on)', async () => {
		const admin = testPool(1);
		const table = await freshClaimTable(
			false,
			await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly')),
		);
		await admin.end();
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen) VALUES ('old', $1), ('fresh', $2)`,
			[daysAgo(40), now],
		);
		expect(table.capabilities.leases).toBe(false);
		const result = await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now });
		expect(result.deleted).toBe(1);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual([
			'fresh',
		]);
	});
});
