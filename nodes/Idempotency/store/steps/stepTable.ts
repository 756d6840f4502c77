import { quoteIdentifier, suffixedIdentifier, type TableRef } from '../table/tableRef';

/** The table of step marks beside a claim table: a row per (key, step) started, gone on Complete. */
export interface StepTableRef {
	schema: string;
	table: string;
	/** `"schema"."<table>_steps"`, safe to put in SQL text. */
	qualified: string;
}

const SUFFIX = '_steps';

/** `<table>_steps` in the claim table's schema, named from the claim table's validated name. */
export function stepTableRef(claimTable: Pick<TableRef, 'schema' | 'table'>): StepTableRef {
	const table = suffixedIdentifier(claimTable.table, SUFFIX);
	return {
		schema: claimTable.schema,
		table,
		qualified: `${quoteIdentifier(claimTable.schema)}.${quoteIdentifier(table)}`,
	};
}

/**
 * A side table, so a claim table whose workflows guard no step costs nothing more. A row says a step of an
 * event's run was started (by `claim_id`, the holder's claim ID as the node gave it, `attempts` times) and,
 * once finished, the result recorded for later runs of the event. It lives until the event's Complete or
 * Release deletes it with the claim.
 */
export function createStepTableSql(ref: StepTableRef): string {
	return (
		`CREATE TABLE IF NOT EXISTS ${ref.qualified} (` +
		'started_at timestamptz NOT NULL DEFAULT now(), ' +
		'finished_at timestamptz, ' +
		'attempts integer NOT NULL DEFAULT 1, ' +
		'key text NOT NULL, ' +
		'step text NOT NULL, ' +
		// NULL for a result an operator recorded by hand (Forget Step).
		'claim_id text, ' +
		'result json, ' +
		'PRIMARY KEY (key, step))'
	);
}

/**
 * A CTE for a statement that settles or deletes claims: deletes the step rows of the keys the CTE `from`
 * lists, in the same statement. Empty where the table has no step table beside it (a statement naming a
 * missing table would fail).
 */
export function dropStepsSql(
	table: { ref: Pick<TableRef, 'schema' | 'table'>; capabilities: { steps?: boolean } },
	from: string,
): string {
	if (!table.capabilities.steps) return '';
	return `, steps_dropped AS (DELETE FROM ${stepTableRef(table.ref).qualified} AS st USING ${from} WHERE st.key = ${from}.key)`;
}
