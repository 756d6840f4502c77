/**
 * A claim table an operator split into partitions when one table was not enough. Every claim, settle,
 * purge and report operation runs on hash-partitioned tables of both layouts in tableLayouts.test.ts;
 * this file covers what table preparation does with them.
 */
import { HASH_PARTITIONED_DDL, LAYOUT_COLUMNS } from '../../support/claimTableSql';
import {
	EVERY_CAPABILITY,
	freshClaimTable,
	openTestClaimTable,
} from '../../support/testClaimTables';
import { testPool, uniqueTableName } from '../../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

describe('a partitioned claim table', () => {
	it('Create Table If Missing adds only what a hash-partitioned table lacks: a column, and the purge index on every partition', async () => {
		const name = uniqueTableName('parted');
		const [create, ...partitions] = HASH_PARTITIONED_DDL(name, LAYOUT_COLUMNS.compact).slice(0, -1);
		await admin.query(create.replace(', fingerprint bytea', ''));
		for (const partition of partitions) await admin.query(partition);
		await admin.query(`INSERT INTO ${name} (key) SELECT 'evt:' || i FROM generate_series(1, 40) i`);
		const table = await freshClaimTable(true, name);
		expect(table.capabilities).toEqual(EVERY_CAPABILITY);
		expect(table.layout.family).toBe('compact');
		const indexed = await admin.query<{ table: string }>(
			`SELECT tablename AS table FROM pg_indexes WHERE tablename LIKE $1 AND indexdef LIKE '%(first_seen)'
			 ORDER BY tablename`,
			[`${name}%`],
		);
		expect(indexed.rows.map((row) => row.table)).toEqual([
			name,
			...[0, 1, 2, 3].map((i) => `${name}_p${i}`),
		]);
		const fingerprint = await admin.query(
			`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'fingerprint'`,
			[`${name}_p2`],
		);
		expect(fingerprint.rows).toEqual([{ type: 'bytea' }]);
		// The rows were kept, each in its partition, and are found as repeats.
		const outcomes = await table.claim(['evt:1', 'evt:41']);
		expect(outcomes.map((outcome) => outcome.won)).toEqual([false, true]);
	});

	it('a table partitioned by time is refused: its primary key cannot be on key alone, so a key could be claimed twice', async () => {
		const name = uniqueTableName('by_time');
		await admin.query(
			`CREATE TABLE ${name} (first_seen timestamptz NOT NULL DEFAULT now(), key text NOT NULL,
			 PRIMARY KEY (key, first_seen)) PARTITION BY RANGE (first_seen)`,
		);
		await admin.query(
			`CREATE TABLE ${name}_all PARTITION OF ${name} FOR VALUES FROM (MINVALUE) TO (MAXVALUE)`,
		);
		await expect(
			openTestClaimTable(name, { createIfMissing: true, privileges: [] }),
		).rejects.toThrow('has no primary key or unique index on "key" alone; a claim needs one');
	});
});
