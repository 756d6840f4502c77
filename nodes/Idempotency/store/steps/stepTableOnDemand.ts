import type { Pool } from 'pg';

import { UNDEFINED_TABLE, withTablesOnDemand } from '../table/createOnDemand';
import type { TableRef } from '../table/tableRef';
import { createStepTableSql, stepTableRef } from './stepTable';

/** Runs `work` against the step table, created first when it is missing and Create Table If Missing is on. */
export function withStepTable<T>(
	pool: Pool,
	claimTable: TableRef,
	createIfMissing: boolean,
	work: () => Promise<T>,
): Promise<T> {
	const ref = stepTableRef(claimTable);
	return withTablesOnDemand(
		pool,
		{
			missing: new Set([UNDEFINED_TABLE]),
			qualified: ref.qualified,
			ddl: [createStepTableSql(ref)],
			refusal:
				`table ${ref.schema}.${ref.table} (where Idempotency Step marks started steps) does not exist; ` +
				'turn on "Create Table If Missing" or create it with workflows/processed_events.sql',
		},
		createIfMissing,
		work,
	);
}
