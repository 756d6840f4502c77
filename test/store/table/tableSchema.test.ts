/**
 * tableSchema: the DDL of a new table, and prepareTable, which reads a table and (when allowed) creates it
 * or adds what it lacks, then says what it can do; runDdl's one transaction.
 */
import { TableError } from '../../../nodes/Idempotency/errors';
import { eventTableRef } from '../../../nodes/Idempotency/store/inbox/eventTable';
import { readTableFacts } from '../../../nodes/Idempotency/store/table/tableFacts';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import {
	CLAIM_ID_COLUMNS,
	createTableSql,
	lacksColumn,
	LEASE_CLAIM_COLUMNS,
	prepareTable,
	runDdl,
} from '../../../nodes/Idempotency/store/table/tableSchema';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { createKeyAndFirstSeenTable } from '../../support/claimTableSql';
import { testCredentials, uniqueTableName } from '../../support/database';
import { EVERY_CAPABILITY, NO_CAPABILITY } from '../../support/testClaimTables';

const pool = () => poolFor(testCredentials());
const fresh = (prefix = 'schema') => tableRef('public', uniqueTableName(prefix));

describe('createTableSql', () => {
	it('creates the compact table, fixed-width columns first, and its purge index', () => {
		const ref = tableRef('app', 'claims');
		expect(createTableSql(ref)).toEqual([
			'CREATE TABLE IF NOT EXISTS "app"."claims" (first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz, ' +
				'lease_until timestamptz, deliveries integer, key text PRIMARY KEY, claim_token bytea, fingerprint bytea, response json)',
			'CREATE INDEX IF NOT EXISTS "claims_first_seen_idx" ON "app"."claims" (first_seen)',
		]);
	});
});

describe('prepareTable', () => {
	it('creates a missing table when allowed, with every capability', async () => {
		const ref = fresh();
		const prepared = await prepareTable(await pool(), ref, true);
		expect(prepared.capabilities).toEqual(EVERY_CAPABILITY);
		expect(prepared.layout.family).toBe('compact');
		expect(prepared.facts.tableExists).toBe(true);
	});

	it('refuses a missing table when not allowed to create it, and a missing schema', async () => {
		const db = await pool();
		await expect(prepareTable(db, fresh(), false)).rejects.toThrow(
			/does not exist; turn on "Create Table If Missing"/,
		);
		await expect(
			prepareTable(db, tableRef(uniqueTableName('noschema'), 'claims'), true),
		).rejects.toThrow(TableError);
	});

	it('uses a key and first_seen table as it is, or, when allowed, adds the columns it lacks', async () => {
		const db = await pool();
		const name = await createKeyAndFirstSeenTable(db, uniqueTableName('keyonly'));
		const ref = tableRef('public', name);
		expect((await prepareTable(db, ref, false)).capabilities).toEqual(NO_CAPABILITY);
		const repaired = await prepareTable(db, ref, true);
		expect(repaired.capabilities).toEqual(EVERY_CAPABILITY);
		// A table made earlier gets the original layout's types.
		expect(repaired.facts.columns.get('claim_token')?.type).toBe('text');
		expect(repaired.facts.columns.has('status')).toBe(true);
	});

	it('with events, makes the event table beside it', async () => {
		const ref = fresh();
		const prepared = await prepareTable(await pool(), ref, true, true);
		expect(prepared.capabilities).toMatchObject({ events: true, eventScope: true });
		const { rows } = await (
			await pool()
		).query('SELECT to_regclass($1) AS t', [eventTableRef(ref).qualified]);
		expect(rows[0].t).not.toBeNull();
	});

	it('refuses a key column that would not store keys exactly, or not uniquely', async () => {
		const db = await pool();
		const padded = fresh('padded');
		await db.query(
			`CREATE TABLE ${padded.qualified} (key char(20) PRIMARY KEY, first_seen timestamptz)`,
		);
		await expect(prepareTable(db, padded, false)).rejects.toThrow(
			/of type character\(20\); it must be text/,
		);
		const shared = fresh('shared');
		await db.query(`CREATE TABLE ${shared.qualified} (key text, first_seen timestamptz)`);
		await expect(prepareTable(db, shared, false)).rejects.toThrow(
			/no primary key or unique index on "key"/,
		);
	});
});

describe('lacksColumn', () => {
	it('a compact table has a status while it has lease_until; the original layout needs the column', async () => {
		const db = await pool();
		const compact = await prepareTable(db, fresh(), true);
		expect(lacksColumn(compact.layout, compact.facts, 'status')).toBe(false);
		expect(lacksColumn(compact.layout, compact.facts, 'no_such_column')).toBe(true);
		const name = await createKeyAndFirstSeenTable(db, uniqueTableName('keyonly'));
		const bare = await prepareTable(db, tableRef('public', name), false);
		for (const column of [...LEASE_CLAIM_COLUMNS, ...CLAIM_ID_COLUMNS])
			expect(lacksColumn(bare.layout, bare.facts, column)).toBe(true);
	});
});

describe('runDdl', () => {
	it('runs its statements in one transaction: one that fails leaves none done', async () => {
		const db = await pool();
		const ref = fresh('ddl');
		const creating = runDdl(db, ref, [`CREATE TABLE ${ref.qualified} (n integer)`, 'SELECT 1/0']);
		await expect(creating).rejects.toMatchObject({ code: '22012' });
		expect((await readTableFacts(db, ref)).tableExists).toBe(false);
		expect(await runDdl(db, ref, [`CREATE TABLE ${ref.qualified} (n integer)`])).toBe(true);
		expect((await readTableFacts(db, ref)).tableExists).toBe(true);
	});
});
