import { TableError } from '../../errors';
import { dropStepsSql } from '../steps/stepTable';
import { quoteIdentifier, suffixedIdentifier, type TableRef } from '../table/tableRef';

/** The table that keeps events beside a claim table: a row per key whose event is kept, gone on Complete. */
export interface EventTableRef {
	schema: string;
	table: string;
	/** `"schema"."<table>_events"`, safe to put in SQL text. */
	qualified: string;
}

const SUFFIX = '_events';

/** Why an event was parked when its last allowed run ended without Complete or Retry Later. */
export const DIED_IN_LAST_RUN =
	'its last run ended without Complete or Retry Later (the execution died)';

/** `<table>_events` in the claim table's schema, named from the claim table's validated name. */
export function eventTableRef(claimTable: Pick<TableRef, 'schema' | 'table'>): EventTableRef {
	const table = suffixedIdentifier(claimTable.table, SUFFIX);
	return {
		schema: claimTable.schema,
		table,
		qualified: `${quoteIdentifier(claimTable.schema)}.${quoteIdentifier(table)}`,
	};
}

/**
 * A side table, so a claim table that keeps no events costs exactly what it did (a 9th column would make
 * every row with a NULL 8 bytes longer). A row lives while its event is in flight: from the claim that
 * kept it until Complete or Release drops it. When it is due again is the claim's own lease_until, so a
 * sender's retry and a scheduled retry decide on one row lock. `dead_at` parks it after Max Attempts.
 */
export function createEventTableSql(ref: EventTableRef): string {
	return (
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (` +
		'received_at timestamptz NOT NULL DEFAULT now(), ' +
		'dead_at timestamptz, ' +
		'attempts integer NOT NULL DEFAULT 1, ' +
		'key text PRIMARY KEY, ' +
		'content_type text, ' +
		'last_error text, ' +
		'headers json, ' +
		// The claim node's Scope (NULL: none): Take Due Events takes only its own scope's events.
		'scope text, ' +
		'body bytea NOT NULL)'
	);
}

/**
 * Deletes the claims a CTE named `from` lists and, where events are kept or steps marked, their events and
 * step marks in the same statement; answers a row per deleted claim. (An event still in flight is among
 * them only where the caller chose so: liveClaimSql.)
 */
export function deleteWithEvents(
	table: { ref: TableRef; capabilities: { events: boolean; steps?: boolean } },
	from: string,
): string {
	const { qualified } = table.ref;
	const steps = dropStepsSql(table, 'gone');
	if (!table.capabilities.events && !steps)
		return `DELETE FROM ${qualified} AS e USING ${from} WHERE e.key = ${from}.key`;
	const events = table.capabilities.events
		? `, dropped AS (DELETE FROM ${eventTableRef(table.ref).qualified} AS v USING gone WHERE v.key = gone.key)`
		: '';
	return (
		`, gone AS (DELETE FROM ${qualified} AS e USING ${from} WHERE e.key = ${from}.key RETURNING e.key)` +
		`${events}${steps} SELECT key FROM gone`
	);
}

/** An event table made before events had a scope: what its owner runs so scoped events can be kept and taken. */
export function scopeColumnMissing(claimTable: Pick<TableRef, 'schema' | 'table'>): TableError {
	const ref = eventTableRef(claimTable);
	return new TableError(
		`${ref.schema}.${ref.table} has no scope column, so events kept with a Scope cannot be told apart; its owner adds it ` +
			`with ALTER TABLE ${ref.qualified} ADD COLUMN scope text (or turn on "Create Table If Missing" on the claim node that keeps events)`,
	);
}
