import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';

import { queryStatement } from '../statements/namedStatements';

export interface BurstStatement {
	name: string;
	text: string;
}

// The text depends only on the tables' names: built and hashed once per table, not per item.
const statements = new Map<string, BurstStatement>();

/** A named statement (planned once per connection: half a join's time, measured) for this text. */
export function burstStatement(text: string): BurstStatement {
	let statement = statements.get(text);
	if (!statement) {
		statement = {
			name: `burst_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`,
			text,
		};
		statements.set(text, statement);
	}
	return statement;
}

/**
 * Runs a named statement on `client`, or on a connection of the pool for just this statement; behind a
 * transaction-mode pooler it goes unnamed (see namedStatements). A connection that failed is dropped.
 */
export async function runStatement<R extends QueryResultRow>(
	pool: Pool,
	client: PoolClient | undefined,
	statement: BurstStatement,
	values: unknown[],
): Promise<QueryResult<R>> {
	if (client) return queryStatement<R>(pool, client, statement, values);
	const own = await pool.connect();
	let done = false;
	try {
		const result = await queryStatement<R>(pool, own, statement, values);
		done = true;
		return result;
	} finally {
		own.release(!done);
	}
}
