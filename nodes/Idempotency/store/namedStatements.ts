import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';

import type { NamedStatement } from './claimSql';

/**
 * Pools that reach Postgres through a transaction-mode pooler (PgBouncer, hosted pooler ports). There a
 * named statement prepared on one server connection is missing, or already present, on the next one,
 * so these pools send the same text unnamed: parsed each time, but correct behind any pooler.
 */
const poolsBehindTransactionPooler = new WeakSet<Pool>();

/** `prepared statement … does not exist` and `… already exists`: both come before the statement runs. */
const STATEMENT_SHARING_SQLSTATES = new Set(['26000', '42P05']);

/**
 * Runs a named statement (planned once per connection: ~10–15 % per claim on a direct connection),
 * and, the first time a pooler shows itself, switches the pool to unnamed statements and runs it again.
 * The retry is safe because neither error lets the statement execute.
 */
export async function queryStatement<R extends QueryResultRow>(
	pool: Pool,
	client: PoolClient,
	statement: NamedStatement,
	values: unknown[],
): Promise<QueryResult<R>> {
	if (!poolsBehindTransactionPooler.has(pool)) {
		let failure: unknown;
		try {
			return await client.query<R>({ name: statement.name, text: statement.text, values });
		} catch (error) {
			failure = error;
		}
		if (!STATEMENT_SHARING_SQLSTATES.has((failure as { code?: string }).code ?? '')) throw failure;
		poolsBehindTransactionPooler.add(pool);
	}
	return client.query<R>({ text: statement.text, values });
}
