import type { Pool } from 'pg';

import { TableError } from '../../errors';
import { createEventTableSql, eventTableRef } from '../inbox/eventTable';
import { readTableFacts, type TableFacts } from './tableFacts';
import { layoutOf, type TableLayout } from './tableLayout';
import type { TableRef } from './tableRef';

/** Which optional columns a claim table has; a table with only `key` and `first_seen` has none. */
export interface TableCapabilities {
	/** last_seen and deliveries */
	counters: boolean;
	/** lease_until and claim_token, and in the original layout status */
	leases: boolean;
	fingerprint: boolean;
	/** response: what Complete stored for the key, replayed to its repeats */
	responses: boolean;
	/** `<table>_events`, where a claim keeps its event until Complete drops it */
	events: boolean;
	/** The event table records each event's scope (Take Due Events takes one scope's events). */
	eventScope: boolean;
	/**
	 * `<table>_steps`, where Idempotency Step marks an event's started steps until Complete deletes them.
	 * Unset (as false) in a picture made without the catalog.
	 */
	steps?: boolean;
}

/** The optional columns of the original layout, in its types: what a table made earlier is given when it lacks one. */
const ORIGINAL_OPTIONAL_COLUMNS: Array<[string, string]> = [
	['last_seen', 'timestamptz'],
	['deliveries', 'integer NOT NULL DEFAULT 1'],
	// Rows that predate this column were claimed once and are final: 'completed' is their true state.
	['status', "text NOT NULL DEFAULT 'completed'"],
	['lease_until', 'timestamptz'],
	['claim_token', 'text'],
	['fingerprint', 'text'],
	['response', 'json'],
];

/**
 * The optional columns of the compact layout. Each is NULL until a claim needs it, and a NULL costs a row
 * nothing: a table of at most 8 columns keeps its null bitmap inside the 24-byte row header (a 9th column
 * would make every row holding a NULL 8 bytes longer), and this layout has 8.
 */
const COMPACT_OPTIONAL_COLUMNS: Array<[string, string]> = [
	// NULL until the first repeat; the time of the last delivery after that.
	['last_seen', 'timestamptz'],
	// Set only while a leased claim is processing: the claim's status is whether it is set.
	['lease_until', 'timestamptz'],
	// NULL means one delivery.
	['deliveries', 'integer'],
	// The 12 bytes of the claim ID, while a claim is held (a Claim Once claim keeps it).
	['claim_token', 'bytea'],
	// A kind byte and 128 bits of the payload's SHA-256.
	['fingerprint', 'bytea'],
	// The answer Complete stored (status code, named headers, body text), exactly as it will be replayed:
	// json, not jsonb, keeps the text as written, so the replay is byte for byte the first answer.
	['response', 'json'],
];

/** Key column types under which the key Postgres stores is the key the node sent, byte for byte. */
const EXACT_KEY_TYPES = new Set(['text', 'character varying']);

/** How long table preparation may wait for a lock before it goes on with the table as it is. */
const DDL_LOCK_TIMEOUT = '3s';

const REQUIRED_COLUMNS: Array<[string, string]> = [
	['key', 'text PRIMARY KEY'],
	['first_seen', 'timestamptz NOT NULL DEFAULT now()'],
];

const compactTypes = new Map([...REQUIRED_COLUMNS, ...COMPACT_OPTIONAL_COLUMNS]);

/**
 * A new table's column order, fixed-width first: Postgres aligns a timestamp to 8 bytes, so a text key
 * placed before them cost up to 7 bytes of padding in every row (measured in test/store/table/bytesPerKey).
 */
const NEW_TABLE_ORDER = [
	'first_seen',
	'last_seen',
	'lease_until',
	'deliveries',
	'key',
	'claim_token',
	'fingerprint',
	'response',
];

/**
 * The DDL that creates a new (compact) table and its purge index; also what README and
 * workflows/processed_events.sql ship. The btree on first_seen lets Purge take the oldest keys a batch
 * at a time without reading the table.
 */
export function createTableSql(ref: TableRef): string[] {
	return [
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (${NEW_TABLE_ORDER.map((name) => `${name} ${compactTypes.get(name)}`).join(', ')})`,
		firstSeenIndexSql(ref),
	];
}

function firstSeenIndexSql(ref: TableRef): string {
	return `CREATE INDEX IF NOT EXISTS ${ref.firstSeenIndex} ON ${ref.qualified} (first_seen)`;
}

export interface PreparedTable {
	capabilities: TableCapabilities;
	layout: TableLayout;
	facts: TableFacts;
}

/**
 * Reads the table and, when `createIfMissing` is on, creates it or adds what it lacks. It runs only the
 * DDL that is missing, only where the role may run it (an existing table the role does not own is used
 * as it is: least-privilege roles must work), and gives up waiting for a lock after a few seconds rather
 * than queueing every claim behind an ALTER TABLE. It never drops or rewrites anything.
 */
export async function prepareTable(
	pool: Pool,
	ref: TableRef,
	createIfMissing: boolean,
	withEvents = false,
): Promise<PreparedTable> {
	let facts = await readTableFacts(pool, ref);
	if (!facts.schemaExists) throw new TableError(`schema "${ref.schema}" does not exist`);
	if (!facts.tableExists) {
		if (!createIfMissing) {
			throw new TableError(
				`table ${ref.schema}.${ref.table} does not exist; turn on "Create Table If Missing" or create it with workflows/processed_events.sql`,
			);
		}
		if (!facts.canCreateInSchema) {
			throw new TableError(
				`table ${ref.schema}.${ref.table} does not exist and this role may not create it (needs CREATE on schema ${ref.schema}); ` +
					'create it as its owner with workflows/processed_events.sql',
			);
		}
	}
	if (withEvents && facts.eventTableNameTaken) {
		const { schema, table } = eventTableRef(ref);
		throw new TableError(
			`${schema}.${table} exists and is not an event table (it lacks key, attempts, dead_at or body), so ` +
				`${ref.schema}.${ref.table} cannot keep events; use another claim table name, or rename that table`,
		);
	}
	const missingDdl =
		createIfMissing && (!facts.tableExists || facts.owned) ? ddlFor(ref, facts) : [];
	if (createIfMissing && withEvents && !facts.eventTableExists && facts.canCreateInSchema)
		missingDdl.push(createEventTableSql(eventTableRef(ref)));
	// An event table made before events had a scope is given the column (NULL: no scope).
	if (
		createIfMissing &&
		withEvents &&
		facts.eventTableExists &&
		!facts.eventTableHasScope &&
		facts.eventTableOwned
	)
		missingDdl.push(
			`ALTER TABLE ${eventTableRef(ref).qualified} ADD COLUMN IF NOT EXISTS scope text`,
		);
	if (missingDdl.length > 0 && (await runDdl(pool, ref, missingDdl)))
		facts = await readTableFacts(pool, ref);
	if (!facts.tableExists) throw new TableError(`table ${ref.schema}.${ref.table} does not exist`);
	checkKeyColumn(ref, facts);
	const layout = layoutOf(facts.columns);
	const has = (name: string) => !lacksColumn(layout, facts, name);
	return {
		facts,
		layout,
		capabilities: {
			counters: has('last_seen') && has('deliveries'),
			leases: has('status') && has('lease_until') && has('claim_token'),
			fingerprint: has('fingerprint'),
			responses: has('response'),
			events: facts.eventTableExists,
			eventScope: facts.eventTableHasScope,
			steps: facts.stepTableExists,
		},
	};
}

/** Whether the table lacks a column an operation names; a compact table derives `status` from `lease_until`. */
export function lacksColumn(layout: TableLayout, facts: TableFacts, name: string): boolean {
	if (name === 'status' && layout.family === 'compact') return !facts.columns.has('lease_until');
	return !facts.columns.has(name);
}

/** What an existing table lacks, in its own layout's types; never a rewrite of what it has. */
function ddlFor(ref: TableRef, facts: TableFacts): string[] {
	if (!facts.tableExists) return createTableSql(ref);
	const optional =
		layoutOf(facts.columns).family === 'compact'
			? COMPACT_OPTIONAL_COLUMNS
			: ORIGINAL_OPTIONAL_COLUMNS;
	const statements = optional
		.filter(([name]) => !facts.columns.has(name))
		.map(([name, type]) => `ALTER TABLE ${ref.qualified} ADD COLUMN IF NOT EXISTS ${name} ${type}`);
	if (!facts.hasFirstSeenIndex && facts.columns.has('first_seen'))
		statements.push(firstSeenIndexSql(ref));
	return statements;
}

/** Runs the DDL in one transaction; false when a lock could not be had in time (the table stays as it was). */
export async function runDdl(
	pool: Pool,
	ref: Pick<TableRef, 'qualified'>,
	statements: string[],
): Promise<boolean> {
	const client = await pool.connect();
	let committed = false;
	let failure: unknown;
	try {
		await client.query('BEGIN');
		// Transaction-scoped, so it holds through a transaction-mode pooler: two workers never race on one CREATE.
		await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
		await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
			`n8n-nodes-idempotency:${ref.qualified}`,
		]);
		for (const statement of statements) await client.query(statement);
		await client.query('COMMIT');
		committed = true;
	} catch (error) {
		failure = error;
	} finally {
		if (!committed) await client.query('ROLLBACK').catch(() => undefined);
		client.release();
	}
	if (committed) return true;
	if ((failure as { code?: string }).code === '55P03') return false;
	throw failure;
}

function checkKeyColumn(ref: TableRef, facts: TableFacts): void {
	const key = facts.columns.get('key');
	if (!key || !facts.columns.has('first_seen')) {
		throw new TableError(
			`table ${ref.schema}.${ref.table} has no "key" and "first_seen" columns; it is not a claim table`,
		);
	}
	// char(n) pads and truncates, citext and nondeterministic collations make different keys equal: any of
	// them would let two events share a claim, or store a key the node can no longer find.
	if (!EXACT_KEY_TYPES.has(key.type)) {
		throw new TableError(
			`table ${ref.schema}.${ref.table} has a "key" column of type ${key.type}; it must be text, so that every key is stored exactly as sent`,
		);
	}
	if (!key.deterministic) {
		throw new TableError(
			`table ${ref.schema}.${ref.table} has a "key" column with a nondeterministic collation, under which different keys can compare equal; use the default collation`,
		);
	}
	if (!facts.keyIsUnique) {
		throw new TableError(
			`table ${ref.schema}.${ref.table} has no primary key or unique index on "key" alone; a claim needs one`,
		);
	}
}

/**
 * The optional columns Claim With Lease reads and writes (a compact table derives status). A stored
 * response is not among them: a table without that column claims with leases as before.
 */
export const LEASE_CLAIM_COLUMNS = ORIGINAL_OPTIONAL_COLUMNS.map(([name]) => name).filter(
	(name) => name !== 'response',
);

/** What settling a claim by its claim ID needs: the holder's claim ID and the claim's state. */
export const CLAIM_ID_COLUMNS = ['status', 'lease_until', 'claim_token'];

/** What Complete needs to store a response with the claim. */
export const RESPONSE_COLUMNS = ['response'];
