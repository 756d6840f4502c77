import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
	burstTables,
	createBurstTablesSql,
	withBurstTables,
} from '../../../nodes/Idempotency/store/bursts/burstTables';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { withClient } from '../../../harness/postgres/connections';
import { testDatabaseUrl, testPool, uniqueTableName } from '../../support/database';

const pool = testPool(4);
afterAll(() => pool.end());

/** The ```sql block under "## The tables" in docs/bursts.md: what a role that may not create them runs. */
function documentedDdl(): string {
	const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'bursts.md'), 'utf8');
	const section = doc.slice(doc.indexOf('## The tables'));
	const block = /```sql\n([\s\S]*?)```/.exec(section);
	if (!block) throw new Error('docs/bursts.md has no sql block under "## The tables"');
	return block[1];
}

/** Columns, constraints and indexes of the two burst tables in `schema`, with the schema's name left out. */
function tablesIn(schema: string) {
	return withClient(testDatabaseUrl(), async (client) => {
		const tables = ['processed_events_bursts', 'processed_events_burst_items'];
		const columns = await client.query(
			`SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity, identity_generation
			 FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2)
			 ORDER BY table_name, ordinal_position`,
			[schema, tables],
		);
		const constraints = await client.query(
			`SELECT c.conrelid::regclass::text AS on_table, c.contype, pg_get_constraintdef(c.oid) AS definition
			 FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1
			 ORDER BY 1, 2, 3`,
			[schema],
		);
		const indexes = await client.query(
			'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1, 2',
			[schema],
		);
		const unqualified = (text: string) => text.split(`${schema}.`).join('');
		return {
			columns: columns.rows,
			constraints: constraints.rows.map((row) => ({ ...row, on_table: unqualified(row.on_table) })),
			indexes: indexes.rows.map((row) => ({ ...row, indexdef: unqualified(row.indexdef) })),
		};
	});
}

async function freshSchema(): Promise<string> {
	const schema = uniqueTableName('burst_ddl');
	await pool.query(`CREATE SCHEMA ${schema}`);
	return schema;
}

describe('the burst tables', () => {
	it("are named beside the claim table, in its schema, within Postgres's 63-byte limit", () => {
		expect(burstTables(tableRef('app', 'processed_events'))).toEqual({
			schema: 'app',
			bursts: '"app"."processed_events_bursts"',
			items: '"app"."processed_events_burst_items"',
			openIndex: '"processed_events_bursts_open"',
			names: { bursts: 'processed_events_bursts', items: 'processed_events_burst_items' },
		});
		const long = burstTables(tableRef('public', 'x'.repeat(63)));
		for (const name of [...Object.values(long.names), long.openIndex.replace(/"/g, '')])
			expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
		expect(new Set(Object.values(long.names)).size).toBe(2);
	});

	it('docs/bursts.md creates the same tables, constraints and indexes as the node', async () => {
		const byNode = await freshSchema();
		for (const statement of createBurstTablesSql(burstTables(tableRef(byNode, 'processed_events'))))
			await pool.query(statement);
		const byDoc = await freshSchema();
		await withClient(testDatabaseUrl(), async (client) => {
			await client.query(`SET search_path TO ${byDoc}`);
			await client.query(documentedDdl());
		});
		const node = await tablesIn(byNode);
		expect(node.columns).toHaveLength(19);
		expect(node.indexes).toHaveLength(3);
		expect(await tablesIn(byDoc)).toEqual(node);
	});

	it('are created on demand, or named in the refusal when they may not be', async () => {
		const tables = burstTables(tableRef('public', uniqueTableName('bursts')));
		const count = () => pool.query(`SELECT count(*)::int AS n FROM ${tables.bursts}`);
		await expect(withBurstTables(pool, tables, false, count)).rejects.toThrow(
			`the burst tables public.${tables.names.bursts} and public.${tables.names.items} do not exist; ` +
				'turn on "Create Table If Missing" or create them with the SQL in docs/bursts.md',
		);
		expect((await withBurstTables(pool, tables, true, count)).rows).toEqual([{ n: 0 }]);
	});

	it('get their open-burst index back when it is gone (an upsert on it fails until then)', async () => {
		const tables = burstTables(tableRef('public', uniqueTableName('bursts')));
		const upsert = () =>
			pool.query(
				`INSERT INTO ${tables.bursts} (key, state, edge, item_count, max_items, quiet, lease, last_at, quiet_until, closes_by)
				 VALUES ('k', 'open', 'trailing', 1, 2, '1 hour', '1 hour', now(), now(), now())
				 ON CONFLICT (key) WHERE state = 'open' DO NOTHING`,
			);
		await withBurstTables(pool, tables, true, upsert);
		await pool.query(`DROP INDEX public.${tables.openIndex}`);
		await withBurstTables(pool, tables, true, upsert);
		const { rows } = await pool.query(
			'SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = $1',
			[tables.openIndex.replace(/"/g, '')],
		);
		expect(rows).toEqual([{ n: 1 }]);
	});
});
