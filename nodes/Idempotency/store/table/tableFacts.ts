import { eventTableRef } from '../inbox/eventTable';
import { stepTableRef } from '../steps/stepTable';
import type { Queryable } from '../statements/queryable';
import type { TableRef } from './tableRef';

/** What the catalog says about a claim table and about the connected role's rights on it. */
export interface TableFacts {
	/** The role the connection runs as. */
	role: string;
	schemaExists: boolean;
	/** The role may create tables in the schema. */
	canCreateInSchema: boolean;
	tableExists: boolean;
	/** The role owns the table (directly or through a role it belongs to): only an owner may ALTER it. */
	owned: boolean;
	columns: Map<string, ColumnFacts>;
	/** A unique index on `key` alone, which `ON CONFLICT (key)` needs. */
	keyIsUnique: boolean;
	/** A plain (not partial) index led by first_seen, which purges by age use. */
	hasFirstSeenIndex: boolean;
	privileges: Record<TablePrivilege, boolean>;
	/**
	 * `<table>_events` exists beside it with an event table's columns: Complete and Release drop a kept
	 * event there. Another table of that name (say, a claim table) is never touched.
	 */
	eventTableExists: boolean;
	/** The event table has a `scope` column (tables made before it lack one until their owner adds it). */
	eventTableHasScope: boolean;
	/** The role owns the event table, so it may add the scope column. */
	eventTableOwned: boolean;
	/** Something named `<table>_events` exists that is not an event table: events cannot be kept. */
	eventTableNameTaken: boolean;
	/** `<table>_steps` exists beside it with a step table's columns: Complete and Release delete its rows. */
	stepTableExists: boolean;
}

export interface ColumnFacts {
	/** As Postgres names it: `text`, `character(20)`, `citext` … */
	type: string;
	/** False for a nondeterministic collation, under which two different keys can compare equal. */
	deterministic: boolean;
}

export type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

interface FactsRow {
	role: string;
	schema_exists: boolean;
	can_create: boolean;
	table_exists: boolean;
	owned: boolean | null;
	columns: Array<{ name: string; type: string; deterministic: boolean }> | null;
	key_unique: boolean | null;
	first_seen_index: boolean | null;
	can_select: boolean | null;
	can_insert: boolean | null;
	can_update: boolean | null;
	can_delete: boolean | null;
	event_table: boolean;
	event_scope: boolean;
	event_owned: boolean;
	event_name_taken: boolean;
	step_table: boolean;
}

/**
 * One catalog query. It reads pg_catalog, not information_schema: information_schema shows only the
 * columns the role has rights on, which made a table the role may not read look like a missing one.
 */
const FACTS_SQL = `
WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = $1),
     rel AS (SELECT c.oid, c.relowner FROM pg_class c JOIN ns ON c.relnamespace = ns.oid
             WHERE c.relname = $2 AND c.relkind IN ('r', 'p')),
     ev AS (SELECT c.oid, c.relowner FROM pg_class c JOIN ns ON c.relnamespace = ns.oid
            WHERE c.relname = $3 AND c.relkind IN ('r', 'p')),
     ev_columns AS (SELECT a.attname FROM ev JOIN pg_attribute a ON a.attrelid = ev.oid AND a.attnum > 0 AND NOT a.attisdropped)
SELECT current_user AS role,
       EXISTS (SELECT 1 FROM ns) AS schema_exists,
       COALESCE((SELECT has_schema_privilege(ns.oid, 'CREATE') AND has_schema_privilege(ns.oid, 'USAGE') FROM ns), false) AS can_create,
       EXISTS (SELECT 1 FROM rel) AS table_exists,
       (SELECT pg_has_role(rel.relowner, 'USAGE') FROM rel) AS owned,
       (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                                          'deterministic', COALESCE(col.collisdeterministic, true)))
          FROM rel JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
          LEFT JOIN pg_collation col ON col.oid = a.attcollation) AS columns,
       (SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                       WHERE i.indrelid = rel.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
                         AND a.attname = 'key') FROM rel) AS key_unique,
       (SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                       WHERE i.indrelid = rel.oid AND i.indpred IS NULL AND a.attname = 'first_seen') FROM rel) AS first_seen_index,
       (SELECT has_table_privilege(rel.oid, 'SELECT') AND has_schema_privilege((SELECT oid FROM ns), 'USAGE') FROM rel) AS can_select,
       (SELECT has_table_privilege(rel.oid, 'INSERT') FROM rel) AS can_insert,
       (SELECT has_table_privilege(rel.oid, 'UPDATE') FROM rel) AS can_update,
       (SELECT has_table_privilege(rel.oid, 'DELETE') FROM rel) AS can_delete,
       (SELECT count(*) = 4 FROM ev_columns WHERE attname IN ('key', 'attempts', 'dead_at', 'body')) AS event_table,
       EXISTS (SELECT 1 FROM ev_columns WHERE attname = 'scope') AS event_scope,
       COALESCE((SELECT pg_has_role(ev.relowner, 'USAGE') FROM ev), false) AS event_owned,
       EXISTS (SELECT 1 FROM pg_class c JOIN ns ON c.relnamespace = ns.oid WHERE c.relname = $3) AS event_name_taken,
       (SELECT count(*) = 4 FROM pg_class c JOIN ns ON c.relnamespace = ns.oid
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relname = $4 AND c.relkind IN ('r', 'p') AND a.attname IN ('key', 'step', 'claim_id', 'started_at')) AS step_table`;

export async function readTableFacts(db: Queryable, ref: TableRef): Promise<TableFacts> {
	const { rows } = await db.query<FactsRow>(FACTS_SQL, [
		ref.schema,
		ref.table,
		eventTableRef(ref).table,
		stepTableRef(ref).table,
	]);
	const row = rows[0];
	return {
		role: row.role,
		schemaExists: row.schema_exists,
		canCreateInSchema: row.can_create,
		tableExists: row.table_exists,
		owned: row.owned === true,
		columns: new Map(
			(row.columns ?? []).map((column) => [
				column.name,
				{ type: column.type, deterministic: column.deterministic },
			]),
		),
		keyIsUnique: row.key_unique === true,
		hasFirstSeenIndex: row.first_seen_index === true,
		privileges: {
			SELECT: row.can_select === true,
			INSERT: row.can_insert === true,
			UPDATE: row.can_update === true,
			DELETE: row.can_delete === true,
		},
		eventTableExists: row.event_table,
		eventTableHasScope: row.event_table && row.event_scope,
		eventTableOwned: row.event_owned,
		eventTableNameTaken: row.event_name_taken && !row.event_table,
		stepTableExists: row.step_table,
	};
}
