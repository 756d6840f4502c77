/**
 * openClaimTable and withCurrentTable: a claim table opened for what an operation needs, refused naming
 * what it lacks, and a statement run once more against the table as it is when the picture was stale.
 */
import { TableError } from '../../../nodes/Idempotency/errors';
import {
	KEPT_EVENT_UPDATE_NEEDS,
	openClaimTable,
	withCurrentTable,
	type TableNeeds,
} from '../../../nodes/Idempotency/store/table/claimTable';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { LEASE_CLAIM_COLUMNS } from '../../../nodes/Idempotency/store/table/tableSchema';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { createKeyAndFirstSeenTable } from '../../support/claimTableSql';
import { createTestRole, testCredentials, testPool, uniqueTableName } from '../../support/database';
import { EVERY_CAPABILITY, NO_CAPABILITY } from '../../support/testClaimTables';

const admin = testPool(2);
afterAll(() => admin.end());

const plain: TableNeeds = { createIfMissing: false, privileges: [] };

async function keyOnlyTable(): Promise<ReturnType<typeof tableRef>> {
	return tableRef('public', await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly')));
}

describe('openClaimTable', () => {
	it('answers the pool, the name, what the table can do and how it stores it', async () => {
		const pool = await poolFor(testCredentials());
		const ref = tableRef('public', uniqueTableName('open'));
		const table = await openClaimTable(pool, ref, {
			createIfMissing: true,
			privileges: ['SELECT'],
		});
		expect(table.pool).toBe(pool);
		expect(table.ref).toEqual(ref);
		expect(table.capabilities).toEqual(EVERY_CAPABILITY);
		expect(table.layout.family).toBe('compact');
	});

	it('refuses a table that lacks what the operation needs, naming the columns and the fix', async () => {
		const pool = await poolFor(testCredentials());
		const ref = await keyOnlyTable();
		expect((await openClaimTable(pool, ref, plain)).capabilities).toEqual(NO_CAPABILITY);
		const opening = openClaimTable(pool, ref, { ...plain, columns: LEASE_CLAIM_COLUMNS });
		await expect(opening).rejects.toThrow(TableError);
		await expect(opening).rejects.toThrow(
			/lacks the columns last_seen, deliveries, status, lease_until, claim_token, fingerprint; turn on "Create Table If Missing" once/,
		);
		await expect(openClaimTable(pool, ref, KEPT_EVENT_UPDATE_NEEDS)).rejects.toThrow(
			/has no event table beside it/,
		);
	});

	it('refuses a role the privileges it lacks, with the GRANT that gives them', async () => {
		const ref = await keyOnlyTable();
		const role = await createTestRole(admin, 'opener');
		try {
			await admin.query(`GRANT SELECT ON ${ref.qualified} TO ${role.name}`);
			const pool = await poolFor(role.credentials());
			await expect(
				openClaimTable(pool, ref, { ...plain, privileges: ['SELECT', 'INSERT', 'DELETE'] }),
			).rejects.toThrow(
				`cannot be used by role "${role.name}": it lacks INSERT, DELETE (GRANT INSERT, DELETE ON ${ref.qualified} TO "${role.name}")`,
			);
		} finally {
			await role.drop();
		}
	});

	it('reads a picture that says the table lacks something again before it refuses', async () => {
		const pool = await poolFor(testCredentials());
		const ref = await keyOnlyTable();
		await openClaimTable(pool, ref, plain);
		await admin.query(
			`ALTER TABLE ${ref.qualified} ADD COLUMN fingerprint text, ADD COLUMN response json`,
		);
		const table = await openClaimTable(pool, ref, { ...plain, columns: ['response'] });
		expect(table.capabilities).toMatchObject({ fingerprint: true, responses: true });
	});
});

describe('withCurrentTable', () => {
	it('runs the statement against a table dropped since it was opened once more, after making it again', async () => {
		const pool = await poolFor(testCredentials());
		const ref = tableRef('public', uniqueTableName('dropped'));
		const needs: TableNeeds = { createIfMissing: true, privileges: [] };
		const table = await openClaimTable(pool, ref, needs);
		await admin.query(`DROP TABLE ${ref.qualified}`);
		let runs = 0;
		const count = await withCurrentTable(table, needs, async (current) => {
			runs++;
			return (await current.pool.query(`SELECT count(*)::int AS n FROM ${current.ref.qualified}`))
				.rows[0].n;
		});
		expect(count).toBe(0);
		expect(runs).toBe(2);
	});

	it('passes any other failure on at once', async () => {
		const pool = await poolFor(testCredentials());
		const needs: TableNeeds = { createIfMissing: true, privileges: [] };
		const table = await openClaimTable(pool, tableRef('public', uniqueTableName('other')), needs);
		let runs = 0;
		const run = withCurrentTable(table, needs, async (current) => {
			runs++;
			return current.pool.query('SELECT 1/0');
		});
		await expect(run).rejects.toMatchObject({ code: '22012' });
		expect(runs).toBe(1);
	});
});
