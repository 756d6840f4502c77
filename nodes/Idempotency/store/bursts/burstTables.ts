import type { Pool } from 'pg';

import { UNDEFINED_TABLE, withTablesOnDemand } from '../table/createOnDemand';
import { quoteIdentifier, suffixedIdentifier, type TableRef } from '../table/tableRef';

/** The two tables of the bursts beside a claim table, and the index that keeps one open burst per key. */
export interface BurstTables {
	schema: string;
	/** `"schema"."<table>_bursts"`: one row per burst. */
	bursts: string;
	/** `"schema"."<table>_burst_items"`: one row per collected item. */
	items: string;
	/** `"<table>_bursts_open"`: unique on key among open bursts. */
	openIndex: string;
	/** Unquoted names, for messages. */
	names: { bursts: string; items: string };
}

/**
 * `<table>_bursts` and `<table>_burst_items` in the claim table's schema, named from its validated name
 * (so they need no validation of their own) within Postgres's 63-byte limit.
 */
export function burstTables(claimTable: TableRef): BurstTables {
	const bursts = suffixedIdentifier(claimTable.table, '_bursts');
	const items = suffixedIdentifier(claimTable.table, '_burst_items');
	const schema = quoteIdentifier(claimTable.schema);
	return {
		schema: claimTable.schema,
		bursts: `${schema}.${quoteIdentifier(bursts)}`,
		items: `${schema}.${quoteIdentifier(items)}`,
		openIndex: quoteIdentifier(suffixedIdentifier(claimTable.table, '_bursts_open')),
		names: { bursts, items },
	};
}

/**
 * A burst is `open` while items may join it, `ended` once an item found it past its quiet period (or
 * full) while its holder had not yet taken it, and `running` once an execution holds it to run the work
 * (until Complete deletes it, or its lease runs out and another execution takes it over). The unique
 * index on key over open bursts is what makes "join the open burst or start one" a single upsert.
 * Every time is the database's clock_timestamp(), read under the burst's row lock: the moment a
 * statement decides is the moment it serialises with the others.
 */
export function createBurstTablesSql(tables: BurstTables): string[] {
	return [
		`CREATE TABLE IF NOT EXISTS ${tables.bursts} (` +
			'id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ' +
			'opened_at timestamptz NOT NULL DEFAULT clock_timestamp(), ' +
			// The last item's arrival: when the statement that collected it decided, under the row lock.
			'last_at timestamptz NOT NULL, ' +
			// When the burst ends unless another item joins (never after closes_by).
			'quiet_until timestamptz NOT NULL, ' +
			// The first item's arrival plus the maximum wait.
			'closes_by timestamptz NOT NULL, ' +
			// After this another execution may take the burst over: its holder died or was too slow.
			'lease_until timestamptz, ' +
			'quiet interval NOT NULL, ' +
			'lease interval NOT NULL, ' +
			'item_count integer NOT NULL, ' +
			'max_items integer NOT NULL, ' +
			'takeovers integer NOT NULL DEFAULT 0, ' +
			"state text NOT NULL CHECK (state IN ('open', 'ended', 'running')), " +
			"edge text NOT NULL CHECK (edge IN ('trailing', 'leading')), " +
			'key text NOT NULL, ' +
			'holder text)',
		`CREATE UNIQUE INDEX IF NOT EXISTS ${tables.openIndex} ON ${tables.bursts} (key) WHERE state = 'open'`,
		`CREATE TABLE IF NOT EXISTS ${tables.items} (` +
			'burst_id bigint NOT NULL, ' +
			'seq integer NOT NULL, ' +
			'arrived_at timestamptz NOT NULL DEFAULT clock_timestamp(), ' +
			'item json NOT NULL, ' +
			'PRIMARY KEY (burst_id, seq))',
	];
}

/** undefined_table, and "no unique constraint matching the ON CONFLICT specification" (the index is gone). */
const MISSING_SQLSTATES = new Set([UNDEFINED_TABLE, '42P10']);

/** What to do about missing burst tables, when the operation does not say otherwise. */
const CREATE_THEM =
	'turn on "Create Table If Missing" or create them with the SQL in docs/bursts.md';

/**
 * Runs `work` against the burst tables, created first when they (or the open-burst index) are missing.
 * `advice` ends the refusal when they may not be created (an operation that never creates them says its own).
 */
export function withBurstTables<T>(
	pool: Pool,
	tables: BurstTables,
	createIfMissing: boolean,
	work: () => Promise<T>,
	advice = CREATE_THEM,
): Promise<T> {
	const onDemand = {
		missing: MISSING_SQLSTATES,
		qualified: tables.bursts,
		ddl: createBurstTablesSql(tables),
		refusal: `the burst tables ${tables.schema}.${tables.names.bursts} and ${tables.schema}.${tables.names.items} do not exist; ${advice}`,
	};
	return withTablesOnDemand(pool, onDemand, createIfMissing, work);
}
