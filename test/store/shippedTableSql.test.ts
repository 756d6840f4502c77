import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { createTableSql } from '../../nodes/Idempotency/store/tableSchema';
import { tableRef } from '../../nodes/Idempotency/store/tableRef';
import { testDatabaseUrl, uniqueTableName, withClient } from '../support/database';

const SHIPPED_SQL = readFileSync(
	join(__dirname, '..', '..', 'workflows', 'processed_events.sql'),
	'utf8',
);

function columnsAfter(statements: string[], schema: string) {
	return withClient(testDatabaseUrl(), async (client) => {
		await client.query(`CREATE SCHEMA ${schema}`);
		await client.query(`SET search_path TO ${schema}`);
		for (const statement of statements) await client.query(statement);
		const result = await client.query(
			`SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
			 WHERE table_schema = $1 AND table_name = 'processed_events' ORDER BY ordinal_position`,
			[schema],
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
});
