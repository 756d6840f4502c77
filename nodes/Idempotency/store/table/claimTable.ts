import type { Pool } from 'pg';

import { TableError } from '../../errors';
import { eventTableRef } from '../inbox/eventTable';
import type { TablePrivilege } from './tableFacts';
import type { TableLayout } from '../record/tableLayout';
import {
	CLAIM_ID_COLUMNS,
	lacksColumn,
	prepareTable,
	type PreparedTable,
	type TableCapabilities,
} from './tableSchema';
import type { TableRef } from './tableRef';
import { processClock } from '../../../shared/processClock';

/** A claim table as one handle: the pool that reaches it, its name, what it has and how it stores it. */
export interface ClaimTable {
	pool: Pool;
	ref: TableRef;
	capabilities: TableCapabilities;
	layout: TableLayout;
}

/** What an operation needs of the table before it may send a statement. */
export interface TableNeeds {
	createIfMissing: boolean;
	/** Optional columns the operation cannot work without (a lease claim needs them all). */
	columns?: string[];
	privileges: TablePrivilege[];
	/** The event table beside it (a claim that keeps its event, and the operations that read them). */
	events?: boolean;
	/** Read the table now, not from the cached picture: what the operation deletes depends on it. */
	fresh?: boolean;
}

/** What Retry Later and Requeue Dead Letter need: they change the claim of a kept event. */
export const KEPT_EVENT_UPDATE_NEEDS: TableNeeds = {
	createIfMissing: false,
	columns: CLAIM_ID_COLUMNS,
	privileges: ['SELECT', 'UPDATE'],
	events: true,
};

interface CacheEntry {
	prepared: Promise<PreparedTable>;
	at: number;
	/** Read with Create Table If Missing on: whatever it could add was added. */
	repaired: boolean;
}

/** After this long a cached picture is read again, so a change made elsewhere (another n8n worker, a DBA) is seen. */
const RECHECK_AFTER_MS = 60_000;

// Per pool, then per table. A WeakMap: a pool closed by the transport takes its pictures with it.
const cache = new WeakMap<Pool, Map<string, CacheEntry>>();

/**
 * Opens the table for one operation. The picture of the table is cached per pool, but never trusted to
 * refuse: when it says the table lacks something the operation needs, it is read again once first.
 */
export async function openClaimTable(
	pool: Pool,
	ref: TableRef,
	needs: TableNeeds,
): Promise<ClaimTable> {
	let prepared = await cachedPreparation(pool, ref, needs);
	let unmet = unmetNeeds(ref, prepared, needs);
	if (unmet.length > 0) {
		prepared = await reprepare(pool, ref, needs);
		unmet = unmetNeeds(ref, prepared, needs);
	}
	if (unmet.length > 0)
		throw new TableError(`table ${ref.schema}.${ref.table} ${unmet.join('; ')}`);
	return { pool, ref, capabilities: prepared.capabilities, layout: prepared.layout };
}

/**
 * Runs a statement against the table; when it fails because the table is not what the picture said
 * (dropped, column removed, constraint gone), the table is read (and, if allowed, repaired) again and
 * the statement runs once more against the new picture.
 */
export async function withCurrentTable<T>(
	table: ClaimTable,
	needs: TableNeeds,
	run: (table: ClaimTable) => Promise<T>,
): Promise<T> {
	let failure: unknown;
	try {
		return await run(table);
	} catch (error) {
		failure = error;
	}
	if (!isTableShapeError(failure)) throw failure;
	await reprepare(table.pool, table.ref, needs);
	return run(await openClaimTable(table.pool, table.ref, needs));
}

/** undefined_table, undefined_column, and "no unique constraint matching the ON CONFLICT specification". */
const TABLE_SHAPE_SQLSTATES = new Set(['42P01', '42703', '42P10']);

function isTableShapeError(error: unknown): boolean {
	return TABLE_SHAPE_SQLSTATES.has((error as { code?: string })?.code ?? '');
}

function tablesOf(pool: Pool): Map<string, CacheEntry> {
	let tables = cache.get(pool);
	if (!tables) {
		tables = new Map();
		cache.set(pool, tables);
	}
	return tables;
}

async function cachedPreparation(
	pool: Pool,
	ref: TableRef,
	needs: TableNeeds,
): Promise<PreparedTable> {
	const { createIfMissing } = needs;
	const tables = tablesOf(pool);
	const entry = tables.get(ref.qualified);
	// A picture read without Create Table If Missing must not stand in for one that adds what is missing:
	// a user who turns the option on, as an error told them to, expects it to act on the next execution.
	if (!entry || (createIfMissing && !entry.repaired) || needs.fresh)
		return reprepare(pool, ref, needs);
	if (processClock.nowMs() - entry.at > RECHECK_AFTER_MS) {
		// Read again in the background; the old picture serves until the new one is in, and stays if the
		// read fails (a database that is restarting must not fail a Complete that only needs the old one).
		entry.at = processClock.nowMs();
		const fresh = prepareTable(pool, ref, createIfMissing, needs.events);
		fresh.then(
			() =>
				tables.get(ref.qualified) === entry &&
				tables.set(ref.qualified, {
					prepared: fresh,
					at: processClock.nowMs(),
					repaired: createIfMissing,
				}),
			() => undefined,
		);
	}
	return entry.prepared;
}

function reprepare(pool: Pool, ref: TableRef, needs: TableNeeds): Promise<PreparedTable> {
	const tables = tablesOf(pool);
	const entry: CacheEntry = {
		prepared: prepareTable(pool, ref, needs.createIfMissing, needs.events),
		at: processClock.nowMs(),
		repaired: needs.createIfMissing,
	};
	tables.set(ref.qualified, entry);
	// A failed preparation (server down, table missing) is tried again by the next execution.
	entry.prepared.catch(() => tables.get(ref.qualified) === entry && tables.delete(ref.qualified));
	return entry.prepared;
}

function unmetNeeds(ref: TableRef, prepared: PreparedTable, needs: TableNeeds): string[] {
	const unmet: string[] = [];
	const missingColumns = (needs.columns ?? []).filter((column) =>
		lacksColumn(prepared.layout, prepared.facts, column),
	);
	if (missingColumns.length > 0) {
		unmet.push(
			`lacks the column${missingColumns.length > 1 ? 's' : ''} ${missingColumns.join(', ')}` +
				(prepared.facts.owned
					? '; turn on "Create Table If Missing" once (it only adds columns) or run the ALTER TABLE lines in workflows/processed_events.sql'
					: '; this role does not own the table, so the owner must add them with the ALTER TABLE lines in workflows/processed_events.sql'),
		);
	}
	if (needs.events && !prepared.capabilities.events) {
		unmet.push(
			`has no event table beside it (${eventTableRef(ref).table}); ` +
				(needs.createIfMissing && !prepared.facts.canCreateInSchema
					? `this role may not create it (needs CREATE on schema ${ref.schema}), so create it as the schema's owner `
					: 'turn on "Create Table If Missing" on the claim node that keeps events, or create it ') +
				'with workflows/processed_events.sql',
		);
	}
	const missing = needs.privileges.filter((privilege) => !prepared.facts.privileges[privilege]);
	if (missing.length > 0) {
		const privileges = missing.join(', ');
		unmet.push(
			`cannot be used by role "${prepared.facts.role}": it lacks ${privileges} (GRANT ${privileges} ON ${ref.qualified} TO "${prepared.facts.role}")`,
		);
	}
	return unmet;
}
