/** readTableFacts: what one catalog query says of a claim table, its event table and the role's rights. */
import {
	createEventTableSql,
	eventTableRef,
} from '../../../nodes/Idempotency/store/inbox/eventTable';
import { readTableFacts } from '../../../nodes/Idempotency/store/table/tableFacts';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { createTableSql } from '../../../nodes/Idempotency/store/table/tableSchema';
import { createKeyAndFirstSeenTable } from '../../support/claimTableSql';
import { createTestRole, testPool, uniqueTableName } from '../../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

async function compactTable(): Promise<ReturnType<typeof tableRef>> {
	const ref = tableRef('public', uniqueTableName('facts'));
	for (const statement of createTableSql(ref)) await admin.query(statement);
	return ref;
}

describe('readTableFacts', () => {
	it('a schema that does not exist: nothing exists, nothing may be done', async () => {
		const facts = await readTableFacts(admin, tableRef(uniqueTableName('noschema'), 'claims'));
		expect(facts).toMatchObject({
			schemaExists: false,
			canCreateInSchema: false,
			tableExists: false,
			owned: false,
			keyIsUnique: false,
			privileges: { SELECT: false, INSERT: false, UPDATE: false, DELETE: false },
			eventTableExists: false,
		});
		expect(facts.columns.size).toBe(0);
	});

	it('a table not made yet, in a schema the role may create in', async () => {
		const facts = await readTableFacts(admin, tableRef('public', uniqueTableName('absent')));
		expect(facts).toMatchObject({
			schemaExists: true,
			canCreateInSchema: true,
			tableExists: false,
		});
	});

	it('a compact claim table: its columns and types, its unique key, its purge index, all rights', async () => {
		const facts = await readTableFacts(admin, await compactTable());
		expect(facts).toMatchObject({
			tableExists: true,
			owned: true,
			keyIsUnique: true,
			hasFirstSeenIndex: true,
			privileges: { SELECT: true, INSERT: true, UPDATE: true, DELETE: true },
			eventTableExists: false,
			eventTableNameTaken: false,
		});
		expect(Object.fromEntries([...facts.columns].map(([name, { type }]) => [name, type]))).toEqual({
			first_seen: 'timestamp with time zone',
			last_seen: 'timestamp with time zone',
			lease_until: 'timestamp with time zone',
			deliveries: 'integer',
			key: 'text',
			claim_token: 'bytea',
			fingerprint: 'bytea',
			response: 'json',
		});
		expect(facts.columns.get('key')?.deterministic).toBe(true);
	});

	it('a key and first_seen table without an index on first_seen', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly'));
		await admin.query(`DROP INDEX IF EXISTS ${name}_first_seen_idx`);
		const facts = await readTableFacts(admin, tableRef('public', name));
		expect([...facts.columns.keys()].sort()).toEqual(['first_seen', 'key']);
		expect(facts.hasFirstSeenIndex).toBe(false);
	});

	it('sees the event table beside it, and its scope column', async () => {
		const ref = await compactTable();
		await admin.query(createEventTableSql(eventTableRef(ref)));
		expect(await readTableFacts(admin, ref)).toMatchObject({
			eventTableExists: true,
			eventTableHasScope: true,
			eventTableOwned: true,
			eventTableNameTaken: false,
		});
	});

	it("a table of the event table's name that is not one is told apart", async () => {
		const ref = await compactTable();
		await admin.query(`CREATE TABLE ${eventTableRef(ref).qualified} (key text, note text)`);
		expect(await readTableFacts(admin, ref)).toMatchObject({
			eventTableExists: false,
			eventTableNameTaken: true,
		});
	});

	it('a role granted SELECT only: it owns nothing and may only read', async () => {
		const ref = await compactTable();
		const role = await createTestRole(admin, 'reader');
		const pool = role.pool(1);
		try {
			await admin.query(`GRANT SELECT ON ${ref.qualified} TO ${role.name}`);
			expect(await readTableFacts(pool, ref)).toMatchObject({
				role: role.name,
				tableExists: true,
				owned: false,
				privileges: { SELECT: true, INSERT: false, UPDATE: false, DELETE: false },
			});
		} finally {
			await pool.end();
			await role.drop();
		}
	});
});
