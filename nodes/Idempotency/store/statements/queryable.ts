import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** The one thing the store needs from pg: a Pool or a Client. */
export interface Queryable {
	query<R extends QueryResultRow = QueryResultRow>(
		text: string,
		values?: unknown[],
	): Promise<QueryResult<R>>;
	query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}
