import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';

import { createTableSql } from '../../../nodes/Idempotency/store/table/tableSchema';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { createStepTableSql, stepTableRef } from '../../../nodes/Idempotency/store/steps/stepTable';
import {
	watermarkRef,
	withWatermarkTable,
} from '../../../nodes/Idempotency/store/watermark/watermarkTable';
import {
	createEventTableSql,
	eventTableRef,
} from '../../../nodes/Idempotency/store/inbox/eventTable';
import { LAYOUT_COLUMNS } from '../../support/claimTableSql';
import { withClient } from '../../../harness/postgres/connections';
import { testDatabaseUrl, uniqueTableName } from '../../support/database';

const SHIPPED_SQL = readFileSync(
	join(__dirname, '..', '..', '..', 'workflows', 'processed_events.sql'),
	'utf8',
);

function columnsAfter(statements: string[], schema: string, table = 'processed_events') {
	return withClient(testDatabaseUrl(), async (client) => {
		await client.query(`CREATE SCHEMA ${schema}`);
		await client.query(`SET search_path TO ${schema}`);
		for (const statement of statements) await client.query(statement);
		return columnsOf(schema, table);
	});
}

function columnsOf(schema: string, table: string) {
	return withClient(testDatabaseUrl(), async (client) => {
		const result = await client.query(
			`SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
			 WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
			[schema, table],
		);
		return result.rows;
	});
}

describe('workflows/processed_events.sql', () => {
	it('creates the same processed_events table the node creates', async () => {
		const byNode = await columnsAfter(
			createTableSql(tableRef('public', 'processed_events')).map((s) => s.replace('"public".', '')),
			uniqueTableName('node_ddl'),
		);
		const byFile = await columnsAfter([SHIPPED_SQL], uniqueTableName('file_ddl'));
		expect(byFile).toEqual(byNode);
		// Fixed-width columns before the text ones: no alignment padding in any row; at most 8 columns, so
		// a row's null bitmap stays inside its 24-byte header.
		expect(byNode.map((c) => c.column_name).join(' ')).toBe(
			'first_seen last_seen lease_until deliveries key claim_token fingerprint response',
		);
		expect(byNode.filter((c) => c.is_nullable === 'YES').map((c) => c.data_type)).toEqual([
			'timestamp with time zone',
			'timestamp with time zone',
			'integer',
			'bytea',
			'bytea',
			'json',
		]);
	});

	it("the tests' own DDL of the compact layout (harness/postgres/claimTableSql.ts) is the table the node creates", async () => {
		const byNode = await columnsAfter(
			createTableSql(tableRef('public', 'processed_events')).map((s) => s.replace('"public".', '')),
			uniqueTableName('node_ddl'),
		);
		const byOracle = await columnsAfter(
			[`CREATE TABLE processed_events (${LAYOUT_COLUMNS.compact})`],
			uniqueTableName('oracle_ddl'),
		);
		expect(byOracle).toEqual(byNode);
	});

	it('run again on the table it created, it adds nothing; on a table of either layout made before stored responses, only the response column', async () => {
		const again = await columnsAfter([SHIPPED_SQL, SHIPPED_SQL], uniqueTableName('again_ddl'));
		expect(again.map((c) => c.column_name)).toHaveLength(8);
		const compact = await columnsAfter(
			[
				`CREATE TABLE processed_events (first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz,
				 lease_until timestamptz, deliveries integer, key text PRIMARY KEY, claim_token bytea, fingerprint bytea)`,
				SHIPPED_SQL,
			],
			uniqueTableName('compact_ddl'),
		);
		expect(compact.map((c) => `${c.column_name} ${c.data_type}`).slice(5)).toEqual([
			'claim_token bytea',
			'fingerprint bytea',
			'response json',
		]);
		const original = await columnsAfter(
			[
				`CREATE TABLE processed_events (first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz,
				 lease_until timestamptz, deliveries integer NOT NULL DEFAULT 1, key text PRIMARY KEY,
				 status text NOT NULL DEFAULT 'completed', claim_token text, fingerprint text)`,
				SHIPPED_SQL,
			],
			uniqueTableName('original_ddl'),
		);
		expect(original.map((c) => `${c.column_name} ${c.data_type}`)).toEqual([
			'first_seen timestamp with time zone',
			'last_seen timestamp with time zone',
			'lease_until timestamp with time zone',
			'deliveries integer',
			'key text',
			'status text',
			'claim_token text',
			'fingerprint text',
			'response json',
		]);
	});

	it('upgrades a table with only key and first_seen without losing a key', async () => {
		const schema = uniqueTableName('keyonly_ddl');
		const rows = await columnsAfter(
			[
				'CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())',
				"INSERT INTO processed_events (key) VALUES ('evt:kept')",
				SHIPPED_SQL,
			],
			schema,
		);
		expect(rows).toHaveLength(9);
		const kept = await withClient(testDatabaseUrl(), (client) =>
			client.query(`SELECT key, status, deliveries FROM ${schema}.processed_events`),
		);
		expect(kept.rows).toEqual([{ key: 'evt:kept', status: 'completed', deliveries: 1 }]);
	});

	it('creates the same processed_events_watermarks table the node creates, with its checks', async () => {
		const table = 'processed_events_watermarks';
		const nodeSchema = uniqueTableName('node_wm');
		const fileSchema = uniqueTableName('file_wm');
		// The node creates its table as a watermark step does, on the first use that finds it missing.
		await withClient(testDatabaseUrl(), (client) => client.query(`CREATE SCHEMA ${nodeSchema}`));
		const ref = watermarkRef(tableRef(nodeSchema, 'processed_events'));
		const pool = new Pool({ connectionString: testDatabaseUrl(), max: 1 });
		await withWatermarkTable(pool, ref, true, () =>
			pool.query(`SELECT FROM ${ref.qualified}`),
		).finally(() => pool.end());
		const byNode = await columnsOf(nodeSchema, table);
		const byFile = await columnsAfter([SHIPPED_SQL], fileSchema, table);
		expect(byFile).toEqual(byNode);
		expect(byNode.map((c) => c.column_name).join(' ')).toBe(
			'advanced_at scope kind mark previous_mark advanced_by',
		);
		const checks = (schema: string) =>
			withClient(testDatabaseUrl(), async (client) =>
				(
					await client.query(
						`SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
						 WHERE n.nspname = $1 ORDER BY def`,
						[schema],
					)
				).rows.filter((row) => !row.def.startsWith('FOREIGN')),
			);
		const fileChecks = (await checks(fileSchema)).filter(
			(row) => row.def.includes('kind') || row.def === 'PRIMARY KEY (scope)',
		);
		expect(fileChecks).toEqual(await checks(nodeSchema));
	});

	it('creates the same processed_events_events table the node creates', async () => {
		const table = 'processed_events_events';
		const ddl = createEventTableSql(eventTableRef(tableRef('public', 'processed_events')));
		const byNode = await columnsAfter(
			[ddl.replace('"public".', '')],
			uniqueTableName('node_ev'),
			table,
		);
		const byFile = await columnsAfter([SHIPPED_SQL], uniqueTableName('file_ev'), table);
		expect(byFile).toEqual(byNode);
		expect(byNode.map((c) => c.column_name).join(' ')).toBe(
			'received_at dead_at attempts key content_type last_error headers scope body',
		);
	});

	it('creates the same processed_events_steps table the node creates', async () => {
		const table = 'processed_events_steps';
		const ddl = createStepTableSql(stepTableRef(tableRef('public', 'processed_events')));
		const byNode = await columnsAfter(
			[ddl.replace('"public".', '')],
			uniqueTableName('node_st'),
			table,
		);
		const byFile = await columnsAfter([SHIPPED_SQL], uniqueTableName('file_st'), table);
		expect(byFile).toEqual(byNode);
		expect(byNode.map((c) => c.column_name).join(' ')).toBe(
			'started_at finished_at attempts key step claim_id result',
		);
	});
});
