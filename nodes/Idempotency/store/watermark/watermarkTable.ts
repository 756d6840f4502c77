import type { Pool } from 'pg';

import { UNDEFINED_TABLE, withTablesOnDemand } from '../table/createOnDemand';
import { quoteIdentifier, suffixedIdentifier, type TableRef } from '../table/tableRef';

/** The watermark table beside a claim table: one row per scope, never more. */
export interface WatermarkRef {
	schema: string;
	table: string;
	/** `"schema"."<table>_watermarks"`, safe to put in SQL text. */
	qualified: string;
}

const SUFFIX = '_watermarks';

/**
 * `<table>_watermarks` in the claim table's schema. Its name is made from the claim table's validated
 * name, so it needs no validation of its own; it is quoted like every identifier.
 */
export function watermarkRef(claimTable: TableRef): WatermarkRef {
	const table = suffixedIdentifier(claimTable.table, SUFFIX);
	return {
		schema: claimTable.schema,
		table,
		qualified: `${quoteIdentifier(claimTable.schema)}.${quoteIdentifier(table)}`,
	};
}

/**
 * One row per scope. `mark` is the highest value passed so far, as text in the canonical form of its
 * kind; `previous_mark` the one it replaced (what the execution that advanced it compared against);
 * `advanced_by` that execution's claim id, so a statement retried after a lost answer knows its own
 * advance. Fixed-width column first, as in the claim table.
 */
function createWatermarkTableSql(ref: WatermarkRef): string {
	return (
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (` +
		'advanced_at timestamptz NOT NULL DEFAULT now(), ' +
		'scope text PRIMARY KEY, ' +
		"kind text NOT NULL CHECK (kind IN ('number', 'date')), " +
		'mark text NOT NULL, ' +
		'previous_mark text, ' +
		'advanced_by text)'
	);
}

/** Runs `work` against the watermark table, created first when it is missing (and allowed). */
export function withWatermarkTable<T>(
	pool: Pool,
	ref: WatermarkRef,
	createIfMissing: boolean,
	work: () => Promise<T>,
): Promise<T> {
	const tables = {
		missing: new Set([UNDEFINED_TABLE]),
		qualified: ref.qualified,
		ddl: [createWatermarkTableSql(ref)],
		refusal: `table ${ref.schema}.${ref.table} does not exist; turn on "Create Table If Missing" or create it with workflows/processed_events.sql`,
	};
	return withTablesOnDemand(pool, tables, createIfMissing, work);
}
