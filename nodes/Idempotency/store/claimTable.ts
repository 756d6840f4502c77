import type { Pool } from 'pg';

import { poolEntryFor } from '../transport/poolRegistry';
import type { PostgresCredentials } from '../transport/postgresCredentials';
import { prepareTable, type TableCapabilities } from './tableSchema';
import type { TableRef } from './tableRef';

export interface ClaimTable {
	pool: Pool;
	ref: TableRef;
	capabilities: TableCapabilities;
}

/** The pooled connection and the prepared table for a credential; preparation is cached per pool. */
export async function openClaimTable(
	credentials: PostgresCredentials,
	ref: TableRef,
	createIfMissing: boolean,
): Promise<ClaimTable> {
	const entry = poolEntryFor(credentials);
	const pool = await entry.pool;
	const cacheKey = `${ref.qualified}|${createIfMissing}`;
	let prepared = entry.tables.get(cacheKey);
	if (!prepared) {
		prepared = prepareTable(pool, ref, createIfMissing);
		entry.tables.set(cacheKey, prepared);
		// A failed preparation (server down, table missing) is tried again by the next execution.
		prepared.catch(() => entry.tables.get(cacheKey) === prepared && entry.tables.delete(cacheKey));
	}
	return { pool, ref, capabilities: await prepared };
}
