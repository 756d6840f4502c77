import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { createTableSql } from '../../nodes/Idempotency/store/tableSchema';
import { tableRef } from '../../nodes/Idempotency/store/tableRef';
import {
	createWatermarkTableSql,
	watermarkRef,
} from '../../nodes/Idempotency/store/watermarkTable';
import { testDatabaseUrl, uniqueTableName, withClient } from '../support/database';

const SHIPPED_SQL = readFileSync(
	join(__dirname, '..', '..', 'workflows', 'processed_events.sql'),
	'utf8',
);

function columnsAfter(statements: string[], schema: string, table = 'processed_events') {
	return withClient(testDatabaseUrl(), async (client) => {
		await client.query(`CREATE SCHEMA ${schema}`);
		await client.query(`SET search_path TO ${schema}`);
		for (const statement of statements) await client.query(statement);
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
		// Fixed-width columns before the text ones: no alignment padding in any row.
		expect(byNode.map((c) => c.column_name).join(' ')).toBe(
			'first_seen last_seen lease_until deliveries key status claim_token fingerprint',
		);
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
		expect(rows).toHaveLength(8);
		const kept = await withClient(testDatabaseUrl(), (client) =>
			client.query(`SELECT key, status, deliveries FROM ${schema}.processed_events`),
		);
		expect(kept.rows).toEqual([{ key: 'evt:kept', status: 'completed', deliveries: 1 }]);
	});

	it('creates the same processed_events_watermarks table the node creates, with its checks', async () => {
		const table = 'processed_events_watermarks';
		const ddl = createWatermarkTableSql(watermarkRef(tableRef('public', 'processed_events')));
		const nodeSchema = uniqueTableName('node_wm');
		const fileSchema = uniqueTableName('file_wm');
		const byNode = await columnsAfter([ddl.replace('"public".', '')], nodeSchema, table);
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
});
