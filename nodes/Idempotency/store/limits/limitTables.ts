import type { Pool } from 'pg';

import { UNDEFINED_TABLE, withTablesOnDemand } from '../table/createOnDemand';
import { quoteIdentifier, suffixedIdentifier, type TableRef } from '../table/tableRef';

/** The tables of the limits beside a claim table. */
export interface LimitTables {
	schema: string;
	/** `"schema"."<table>_slots"`: one row per slot of a key (Take Slot, Free Slot). */
	slots: string;
	/** `"<table>_slots_holder"`: unique on the holder's slot ID, which Free Slot finds a slot by. */
	holderIndex: string;
	/** `"schema"."<table>_rates"`: one row per key, its recent starts (Check Rate). */
	rates: string;
	/** Unquoted names, for messages. */
	names: { slots: string; rates: string };
}

/**
 * `<table>_slots` and `<table>_rates` in the claim table's schema, named from its validated name (so they
 * need no validation of their own) within Postgres's 63-byte limit.
 */
export function limitTables(claimTable: TableRef): LimitTables {
	const slots = suffixedIdentifier(claimTable.table, '_slots');
	const rates = suffixedIdentifier(claimTable.table, '_rates');
	const schema = quoteIdentifier(claimTable.schema);
	return {
		schema: claimTable.schema,
		slots: `${schema}.${quoteIdentifier(slots)}`,
		holderIndex: quoteIdentifier(suffixedIdentifier(claimTable.table, '_slots_holder')),
		rates: `${schema}.${quoteIdentifier(rates)}`,
		names: { slots, rates },
	};
}

/**
 * A key's slots are rows 1..N, made the first time the key is asked for N of them. A slot is held while
 * its lease runs (lease_until, claim_token: the claim kernel's columns, so "held" and "ended" mean what
 * they mean for a claim); a freed slot has no holder, and its lease ended when it was freed (or made): the
 * time it became free, which Purge reads. A row per slot is what lets "take a free one" be a
 * row lock: two executions never take the same row, so a key never has more than N holders.
 *
 * A key's rate row keeps the start times still inside the window (at most R of them, oldest first), the
 * time of its last decision, the attempt that last started (so an attempt sent twice starts once), and when
 * its newest start leaves the window (counts_until: Purge deletes the row after that).
 */
export function createLimitTablesSql(tables: LimitTables): string[] {
	return [
		`CREATE TABLE IF NOT EXISTS ${tables.slots} (` +
			'key text NOT NULL, ' +
			'slot integer NOT NULL, ' +
			'lease_until timestamptz, ' +
			'claim_token text, ' +
			'PRIMARY KEY (key, slot))',
		`CREATE UNIQUE INDEX IF NOT EXISTS ${tables.holderIndex} ON ${tables.slots} (claim_token)`,
		`CREATE TABLE IF NOT EXISTS ${tables.rates} (` +
			'key text PRIMARY KEY, ' +
			'starts timestamptz[] NOT NULL, ' +
			'decided_at timestamptz NOT NULL, ' +
			'last_start_by text, ' +
			'counts_until timestamptz NOT NULL)',
	];
}

/** undefined_table, and "no unique constraint matching the ON CONFLICT specification" (a key is gone). */
const MISSING_SQLSTATES = new Set([UNDEFINED_TABLE, '42P10']);

/** What a missing table's error advises, after saying which do not exist. */
const CREATE_THEM =
	'turn on "Create Table If Missing" or create them with the SQL in docs/limits.md';

/**
 * Runs `work` against the limit tables, created first when they are missing and `createIfMissing`; else
 * the error says they do not exist and `advice` (an operation that never creates them says its own).
 */
export function withLimitTables<T>(
	pool: Pool,
	tables: LimitTables,
	createIfMissing: boolean,
	work: () => Promise<T>,
	advice = CREATE_THEM,
): Promise<T> {
	const onDemand = {
		missing: MISSING_SQLSTATES,
		qualified: tables.slots,
		ddl: createLimitTablesSql(tables),
		refusal: `the limit tables ${tables.schema}.${tables.names.slots} and ${tables.schema}.${tables.names.rates} do not exist; ${advice}`,
	};
	return withTablesOnDemand(pool, onDemand, createIfMissing, work);
}
