import type { Pool } from 'pg';

import type { Queryable } from './queryable';
import type { TableRef } from './tableRef';

/** Which optional columns a claim table has: a seed-shaped table has only key and first_seen. */
export interface TableCapabilities {
	/** last_seen and deliveries */
	counters: boolean;
	/** status, lease_until and claim_token */
	leases: boolean;
	fingerprint: boolean;
}

export class MissingTableError extends Error {}

const OPTIONAL_COLUMNS: Array<[string, string]> = [
	['last_seen', 'timestamptz'],
	['deliveries', 'integer NOT NULL DEFAULT 1'],
	// Rows that predate this column were claimed once and are final: 'completed' is their true state.
	['status', "text NOT NULL DEFAULT 'completed'"],
	['lease_until', 'timestamptz'],
	['claim_token', 'text'],
	['fingerprint', 'text'],
];

/** The DDL the node runs when "Create Table If Missing" is on; also what README and workflows/ ship. */
export function createTableSql(ref: TableRef): string[] {
	return [
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		...OPTIONAL_COLUMNS.map(([name, type]) => `ALTER TABLE ${ref.qualified} ADD COLUMN IF NOT EXISTS ${name} ${type}`),
		`CREATE INDEX IF NOT EXISTS ${ref.firstSeenIndex} ON ${ref.qualified} (first_seen)`,
	];
}

/**
 * Creates the table or adds missing columns (never drops or rewrites anything), then reports what the
 * table has. An advisory lock keeps two n8n workers from racing on the same CREATE TABLE.
 */
export async function prepareTable(pool: Pool, ref: TableRef, createIfMissing: boolean): Promise<TableCapabilities> {
	let columns = await readColumns(pool, ref);
	const complete = OPTIONAL_COLUMNS.every(([name]) => columns.has(name)) && (await hasFirstSeenIndex(pool, ref));
	if (createIfMissing && !complete) {
		const client = await pool.connect();
		let committed = false;
		try {
			await client.query('BEGIN');
			await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`n8n-nodes-idempotency:${ref.qualified}`]);
			for (const statement of createTableSql(ref)) await client.query(statement);
			await client.query('COMMIT');
			committed = true;
		} finally {
			if (!committed) await client.query('ROLLBACK').catch(() => undefined);
			client.release();
		}
		columns = await readColumns(pool, ref);
	}
	if (!columns.has('key') || !columns.has('first_seen')) {
		throw new MissingTableError(
			columns.size === 0
				? `table ${ref.schema}.${ref.table} does not exist; turn on "Create Table If Missing" or create it with workflows/processed_events.sql`
				: `table ${ref.schema}.${ref.table} has no "key" and "first_seen" columns; it is not a claim table`,
		);
	}
	return {
		counters: columns.has('last_seen') && columns.has('deliveries'),
		leases: columns.has('status') && columns.has('lease_until') && columns.has('claim_token'),
		fingerprint: columns.has('fingerprint'),
	};
}

async function readColumns(db: Queryable, ref: TableRef): Promise<Set<string>> {
	const result = await db.query<{ column_name: string }>(
		'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
		[ref.schema, ref.table],
	);
	return new Set(result.rows.map((row) => row.column_name));
}

async function hasFirstSeenIndex(db: Queryable, ref: TableRef): Promise<boolean> {
	const result = await db.query(
		`SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		 WHERE i.indrelid = to_regclass($1) AND a.attname = 'first_seen'`,
		[ref.qualified],
	);
	return result.rowCount !== null && result.rowCount > 0;
}
