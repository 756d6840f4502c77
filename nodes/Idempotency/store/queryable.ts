import type { QueryResult, QueryResultRow } from 'pg';

/** The one thing the store needs from pg: a Pool or a Client. */
export interface Queryable {
	query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}
