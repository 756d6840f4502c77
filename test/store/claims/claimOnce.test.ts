import { openClaimTable } from '../../../nodes/Idempotency/store/table/claimTable';
import { TableError } from '../../../nodes/Idempotency/errors';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { createKeyAndFirstSeenTable, rowsOf } from '../../support/claimTableSql';
import { EVERY_CAPABILITY, freshClaimTable, NO_CAPABILITY } from '../../support/testClaimTables';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

describe('claim once (INSERT … ON CONFLICT (key) DO NOTHING)', () => {
	it('A, A again, B → new, duplicate, new; two rows; the repeat is counted', async () => {
		const table = await freshClaimTable();
		const [a1] = await table.claim(['evt:A']);
		const [a2] = await table.claim(['evt:A']);
		const [b] = await table.claim(['evt:B']);
		expect([a1.won, a2.won, b.won]).toEqual([true, false, true]);
		expect(a2.duplicateKind).toBe('completed');
		expect(a2.firstSeen?.toISOString()).toBe(a1.firstSeen?.toISOString());
		const rows = await rowsOf(table.pool, table.ref.qualified);
		expect(rows.map((r) => [r.key, r.deliveries, r.status])).toEqual([
			['evt:A', 2, 'completed'],
			['evt:B', 1, 'completed'],
		]);
	});

	it('claims a whole batch at once; a key twice in one batch is new once, then duplicate', async () => {
		const table = await freshClaimTable();
		const outcomes = await table.claim(['evt:1', 'evt:2', 'evt:1', 'evt:3', 'evt:2']);
		expect(outcomes.map((o) => o.won)).toEqual([true, true, false, true, false]);
		expect(outcomes[2].duplicateKind).toBe('completed');
		expect((await rowsOf(table.pool, table.ref.qualified)).length).toBe(3);
	});

	it('stores keys holding quotes, SQL and unicode verbatim', async () => {
		const table = await freshClaimTable();
		const nasty = [
			`evt:'); DROP TABLE processed_events; --`,
			'evt:"quoted"',
			'evt:événement 😀',
			'evt:\\x00',
		];
		expect((await table.claim(nasty)).every((o) => o.won)).toBe(true);
		expect((await table.claim(nasty)).every((o) => !o.won)).toBe(true);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((r) => r.key).sort()).toEqual(
			[...nasty].sort(),
		);
	});

	it('keeps working on a table with only key and first_seen, without touching it', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly'));
		await admin.query(
			`INSERT INTO ${name} (key, first_seen) VALUES ('evt:old', now() - interval '2 days')`,
		);
		const table = await freshClaimTable(false, name);
		expect(table.capabilities).toEqual(NO_CAPABILITY);
		const [old, fresh] = await table.claim(['evt:old', 'evt:new']);
		expect(old.won).toBe(false);
		expect(old.duplicateKind).toBe('completed');
		expect(old.firstSeen!.getTime()).toBeLessThan(Date.now() - 86_400_000);
		expect(fresh.won).toBe(true);
		const columns = await admin.query(
			`SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY 1`,
			[name],
		);
		expect(columns.rows.map((r) => r.column_name)).toEqual(['first_seen', 'key']);
	});

	it('adds the new columns to a table with only key and first_seen when asked, keeping its rows (old claims are completed)', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly'));
		await admin.query(`INSERT INTO ${name} (key) VALUES ('evt:old')`);
		const table = await freshClaimTable(true, name);
		expect(table.capabilities).toEqual(EVERY_CAPABILITY);
		const [old] = await table.claim(['evt:old'], { mode: 'lease' });
		expect(old.won).toBe(false);
		expect(old.duplicateKind).toBe('completed');
		expect(old.deliveries).toBe(2);
	});

	it('refuses a missing table when creation is off, naming the table and the fix', async () => {
		const missing = uniqueTableName('missing');
		const opening = freshClaimTable(false, missing);
		await expect(opening).rejects.toThrow(TableError);
		await expect(opening).rejects.toThrow(
			`table public.${missing} does not exist; turn on "Create Table If Missing"`,
		);
	});

	it('creates the table in another schema, quoted, with an index on first_seen', async () => {
		const schema = uniqueTableName('Schema');
		await admin.query(`CREATE SCHEMA "${schema}"`);
		const opened = await openClaimTable(
			await poolFor(testCredentials()),
			tableRef(schema, 'Mixed_Case'),
			{ createIfMissing: true, privileges: [] },
		);
		const index = await admin.query(
			`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'Mixed_Case' AND indexdef LIKE '%(first_seen)%'`,
			[schema],
		);
		expect(index.rowCount).toBe(1);
		expect(opened.ref.qualified).toBe(`"${schema}"."Mixed_Case"`);
	});
});

describe('table names', () => {
	it.each(['x; DROP TABLE y', 'a"b', 'a.b', '', ' ', '1abc', 'a'.repeat(64), 'tab\tle'])(
		'refuses %j',
		(name) => {
			expect(() => tableRef('public', name)).toThrow(/is not allowed/);
			expect(() => tableRef(name, 'processed_events')).toThrow(/Schema name/);
		},
	);
});
