import { TableError } from '../../../nodes/Idempotency/errors';
import {
	openClaimTable,
	withCurrentTable,
	type TableNeeds,
} from '../../../nodes/Idempotency/store/table/claimTable';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import {
	CLAIM_ID_COLUMNS,
	LEASE_CLAIM_COLUMNS,
} from '../../../nodes/Idempotency/store/table/tableSchema';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { createKeyAndFirstSeenTable, rowsOf } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	NO_CAPABILITY,
	openTestClaimTable as open,
	withClaimHelper,
} from '../../support/testClaimTables';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';

const lease = (createIfMissing: boolean): TableNeeds => ({
	createIfMissing,
	columns: LEASE_CLAIM_COLUMNS,
	privileges: [],
});
const plain = (createIfMissing: boolean): TableNeeds => ({ createIfMissing, privileges: [] });
/** What Complete and Release with a claim ID open. */
const settling: TableNeeds = { createIfMissing: false, columns: CLAIM_ID_COLUMNS, privileges: [] };

const admin = testPool(2);
afterAll(() => admin.end());

describe('the purge index of a table made earlier', () => {
	it('a partial index on first_seen is not taken for the purge index: the plain one is added', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('partial'));
		await admin.query(
			`CREATE INDEX ${name}_recent ON ${name} (first_seen) WHERE first_seen > '2026-01-01'`,
		);
		await open(name, plain(true));
		const { rows } = await admin.query<{ indexdef: string }>(
			`SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%(first_seen)' ORDER BY indexname`,
			[name],
		);
		expect(rows).toHaveLength(1);
		expect(rows[0].indexdef).toContain(`${name}_first_seen_idx`);
	});
});

describe('a pool never acts on a stale picture of the table', () => {
	it('key/first_seen table → purge → a lease claim adds columns → Complete and Release with the claim ID settle for real', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('stale'));
		await open(name, plain(false)); // what Purge opens: the pool now holds a picture without lease columns
		const claimer = await open(name, lease(true));
		const [a, b] = await claimer.claim(['evt:A', 'evt:B'], { mode: 'lease' });
		expect(a.claimId).not.toBeNull();

		const settler = await open(name, settling);
		const settled = [
			...(await completeKeys(settler, [{ key: 'evt:A', claimId: a.claimId }])),
			...(await releaseKeys(settler, [{ key: 'evt:B', claimId: b.claimId }])),
		];
		expect(settled).toEqual([true, true]);
		expect(await rowsOf(admin, `"public"."${name}"`)).toMatchObject([
			{ key: 'evt:A', status: 'completed' },
		]);
	});

	it('a table dropped while n8n runs is created again when Create Table If Missing is on', async () => {
		const name = uniqueTableName('dropped');
		const needs = plain(true);
		const table = await open(name, needs);
		await table.claim(['evt:before']);
		await admin.query(`DROP TABLE ${name}`);
		const [after] = await withCurrentTable(table, needs, (current) =>
			withClaimHelper(current).claim(['evt:after']),
		);
		expect(after.won).toBe(true);
		expect((await rowsOf(admin, `"public"."${name}"`)).map((row) => row.key)).toEqual([
			'evt:after',
		]);
	});

	it('the ALTER TABLE the error recommends takes effect without a restart', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('altered'));
		await open(name, plain(false));
		await expect(open(name, lease(false))).rejects.toThrow(
			/lacks the columns last_seen, deliveries, status, lease_until, claim_token, fingerprint/,
		);
		await admin.query(`ALTER TABLE ${name} ${LEASE_COLUMNS_DDL}`);
		const table = await open(name, lease(false));
		const [outcome] = await table.claim(['evt:A'], { mode: 'lease' });
		expect(outcome).toMatchObject({ won: true, status: 'processing' });
	});

	it('Create Table If Missing turned on, as the missing-column error advises, adds the column on the next execution', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('turnedon'));
		const storing: TableNeeds = { createIfMissing: false, columns: ['response'], privileges: [] };
		await open(name, plain(false)); // the claim node with the option off: the pool caches this picture
		await expect(open(name, storing)).rejects.toThrow(
			/lacks the column response; turn on "Create Table If Missing"/,
		);
		await open(name, plain(true)); // the claim node's next execution, with the option on
		const { rows } = await admin.query(
			`SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'response'`,
			[name],
		);
		expect(rows).toHaveLength(1);
		await expect(open(name, storing)).resolves.toMatchObject({ capabilities: { responses: true } });
	});

	it('Complete or Release with a claim ID on a table that cannot check it fails loudly', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('nocheck'));
		await admin.query(`INSERT INTO ${name} (key) VALUES ('evt:A')`);
		await expect(open(name, settling)).rejects.toThrow(
			/lacks the columns status, lease_until, claim_token/,
		);
	});
});

describe('what table preparation refuses and what it leaves alone', () => {
	it.each([
		['char(40)', 'character(40)'],
		['varchar(30)', 'character varying(30)'],
	])('refuses a key column of type %s, naming the type', async (sqlType, shown) => {
		const name = uniqueTableName('keytype');
		await admin.query(
			`CREATE TABLE ${name} (key ${sqlType} PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		await expect(open(name, plain(false))).rejects.toThrow(
			`has a "key" column of type ${shown}; it must be text`,
		);
		expect((await admin.query(`SELECT count(*)::int AS n FROM ${name}`)).rows[0].n).toBe(0);
	});

	it('refuses a key column with a nondeterministic collation', async () => {
		const name = uniqueTableName('collation');
		await admin.query(
			`DO $$ BEGIN CREATE COLLATION IF NOT EXISTS idem_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
			 EXCEPTION WHEN unique_violation THEN NULL; END $$`,
		);
		await admin.query(
			`CREATE TABLE ${name} (key text COLLATE idem_ci PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		await expect(open(name, plain(false))).rejects.toThrow(/nondeterministic collation/);
	});

	it('two long table names sharing 48 characters each get their own first_seen index, and a second pool runs no DDL', async () => {
		const prefix = `t${uniqueTableName('').slice(1)}${'x'.repeat(40)}`.slice(0, 48);
		const [first, second] = [`${prefix}_alpha`, `${prefix}_beta`];
		await open(first, plain(true));
		await open(second, plain(true));
		for (const name of [first, second]) {
			const indexes = await admin.query(
				`SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%(first_seen)%'`,
				[name],
			);
			expect(indexes.rowCount).toBe(1);
		}
		// A fresh pool (another n8n worker) prepares a complete table without taking any lock that blocks claims:
		// with a long reader holding the table, it must not queue behind it.
		const reader = await admin.connect();
		await reader.query('BEGIN');
		await reader.query(`SELECT 1 FROM "${second}" LIMIT 1`);
		const started = Date.now();
		await open(second, plain(true), testCredentials({ maxConnections: 3 }));
		expect(Date.now() - started).toBeLessThan(2_000);
		await reader.query('ROLLBACK');
		reader.release();
	});

	it('a least-privilege role (SELECT, INSERT, UPDATE, DELETE) claims on a key/first_seen table with Create Table on, without DDL', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('leastpriv'));
		const role = uniqueTableName('app');
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-pw'`);
		await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${name} TO ${role}`);
		const credentials = testCredentials({ user: role, password: 'app-pw' });
		const table = await open(
			name,
			{ createIfMissing: true, privileges: ['SELECT', 'INSERT', 'UPDATE'] },
			credentials,
		);
		expect(table.capabilities).toEqual(NO_CAPABILITY);
		const [first, again] = [...(await table.claim(['evt:A'])), ...(await table.claim(['evt:A']))];
		expect([first.won, again.won]).toEqual([true, false]);
		// Claim With Lease needs columns this role cannot add: the error says who must add them.
		await expect(open(name, lease(true), credentials)).rejects.toThrow(
			/this role does not own the table, so the owner must add them/,
		);
	});

	it('a role with no rights on an existing table is told what it lacks, not that the table is missing', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('nogrant'));
		const role = uniqueTableName('nobody');
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'nobody-pw'`);
		const credentials = testCredentials({ user: role, password: 'nobody-pw' });
		await expect(
			open(name, { createIfMissing: true, privileges: ['SELECT', 'INSERT'] }, credentials),
		).rejects.toThrow(
			`table public.${name} cannot be used by role "${role}": it lacks SELECT, INSERT (GRANT SELECT, INSERT ON "public"."${name}" TO "${role}")`,
		);
	});

	it('a role that may not create the missing table is told which privilege it lacks', async () => {
		const role = uniqueTableName('nocreate');
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'nc-pw'`);
		await admin.query(`CREATE SCHEMA ${role}_s`);
		await admin.query(`GRANT USAGE ON SCHEMA ${role}_s TO ${role}`);
		const pool = await poolFor(testCredentials({ user: role, password: 'nc-pw' }));
		const opening = openClaimTable(pool, tableRef(`${role}_s`, 'processed_events'), plain(true));
		await expect(opening).rejects.toThrow(TableError);
		await expect(opening).rejects.toThrow(`needs CREATE on schema ${role}_s`);
	});

	it('a role that may not create the event table is told so, not to turn on the option it has on', async () => {
		const role = uniqueTableName('noevents');
		const schema = `${role}_s`;
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'ne-pw'`);
		await admin.query(`CREATE SCHEMA ${schema}`);
		await openClaimTable(await poolFor(testCredentials()), tableRef(schema, 'claims'), lease(true));
		await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
		await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.claims TO ${role}`);
		const pool = await poolFor(testCredentials({ user: role, password: 'ne-pw' }));
		const opening = openClaimTable(pool, tableRef(schema, 'claims'), {
			...lease(true),
			events: true,
		});
		await expect(opening).rejects.toThrow(
			`has no event table beside it (claims_events); this role may not create it (needs CREATE on schema ${schema}), so create it as the schema's owner with workflows/processed_events.sql`,
		);
	});
});

const LEASE_COLUMNS_DDL = [
	'ADD COLUMN last_seen timestamptz',
	'ADD COLUMN deliveries integer NOT NULL DEFAULT 1',
	"ADD COLUMN status text NOT NULL DEFAULT 'completed'",
	'ADD COLUMN lease_until timestamptz',
	'ADD COLUMN claim_token text',
	'ADD COLUMN fingerprint text',
].join(', ');
