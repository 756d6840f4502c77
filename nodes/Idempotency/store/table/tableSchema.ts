import type { Pool } from 'pg';

import { TableError } from '../../errors';
import { createEventTableSql, eventTableRef } from '../inbox/eventTable';
import { readTableFacts, type TableFacts } from './tableFacts';
import { layoutOf, type TableLayout } from '../record/tableLayout';
import {
	CLAIM_COLUMNS,
	claimColumnsOf,
	type ClaimColumnName,
	type ClaimColumnPart,
} from '../record/claimRow';
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

/** Key column types under which the key Postgres stores is the key the node sent, byte for byte. */
const EXACT_KEY_TYPES = new Set(['text', 'character varying']);

/** How long table preparation may wait for a lock before it goes on with the table as it is. */
const DDL_LOCK_TIMEOUT = '3s';

/**
 * A new table's column order, fixed-width first: Postgres aligns a timestamp to 8 bytes, so a text key
 * placed before them cost up to 7 bytes of padding in every row (measured in test/store/table/bytesPerKey).
 */
const NEW_TABLE_ORDER: ClaimColumnName[] = [
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
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (${NEW_TABLE_ORDER.map((name) => `${name} ${CLAIM_COLUMNS[name].compact}`).join(', ')})`,
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
	const has = (part: ClaimColumnPart) =>
		claimColumnsOf(part).every((name) => !lacksColumn(layout, facts, name));
	return {
		facts,
		layout,
		capabilities: {
			counters: has('counters'),
			leases: has('leases'),
			fingerprint: has('fingerprint'),
			responses: has('responses'),
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
	// A compact table is given them in its own order and types, a table made earlier in the original ones.
	const compact = layoutOf(facts.columns).family === 'compact';
	const optional = compact ? NEW_TABLE_ORDER : (Object.keys(CLAIM_COLUMNS) as ClaimColumnName[]);
	const statements = optional
		.filter((name) => CLAIM_COLUMNS[name].part !== 'required' && !facts.columns.has(name))
		.map(
			(name) =>
				`ALTER TABLE ${ref.qualified} ADD COLUMN IF NOT EXISTS ${name} ${CLAIM_COLUMNS[name][compact ? 'compact' : 'original']}`,
		);
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
export const LEASE_CLAIM_COLUMNS: string[] = claimColumnsOf('counters', 'leases', 'fingerprint');

/** What settling a claim by its claim ID needs: the holder's claim ID and the claim's state. */
export const CLAIM_ID_COLUMNS: string[] = claimColumnsOf('leases');

/** What Complete needs to store a response with the claim. */
export const RESPONSE_COLUMNS: string[] = claimColumnsOf('responses');
