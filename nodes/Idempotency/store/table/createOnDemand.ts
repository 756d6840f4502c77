import type { Pool } from 'pg';

import { TableError } from '../../errors';
import { runDdl } from './tableSchema';

/** undefined_table */
export const UNDEFINED_TABLE = '42P01';

/** Side tables a statement needs (watermarks, bursts), and how to make them when they are missing. */
export interface TablesOnDemand {
	/** The SQLSTATEs that say they (or an index they need) are missing. */
	missing: ReadonlySet<string>;
	/** The first table's quoted name: runDdl's lock, so two executions never race on one CREATE. */
	qualified: string;
	ddl: string[];
	/** The error's words when they are missing and may not be created. */
	refusal: string;
}

/**
 * Runs `work`; when its tables are missing, creates them (if allowed) and runs `work` once more. Nothing is
 * read first: an execution that finds its tables pays for no catalog query.
 */
export async function withTablesOnDemand<T>(
	pool: Pool,
	tables: TablesOnDemand,
	createIfMissing: boolean,
	work: () => Promise<T>,
): Promise<T> {
	let failure: unknown;
	try {
		return await work();
	} catch (error) {
		failure = error;
	}
	if (!tables.missing.has((failure as { code?: string })?.code ?? '')) throw failure;
	if (!createIfMissing) throw new TableError(tables.refusal);
	await runDdl(pool, { qualified: tables.qualified }, tables.ddl);
	return work();
}
