// A claim table of the node's own DDL filled in bulk with rows like completed claims, and its size on disk.
import type { Pool } from 'pg';

import type { TableRef } from '../../nodes/Idempotency/store/table/tableRef';
import type { Dist } from './dist';

/** Row i of a bulk load whose keys are `evt:evt_` + this suffix: 24 hex digits of i, like a Stripe id. */
export const LOADED_ID_SUFFIX_SQL = "lpad(to_hex(i), 24, '0')";

/** The event id row i of such a load carries (the node's key is `evt:` + id). */
export const loadedId = (i: number): string => `evt_${i.toString(16).padStart(24, '0')}`;

export interface BulkKeys {
	count: number;
	/** first_seen spread evenly over this many days up to now (never repeated: last_seen and deliveries NULL). */
	days: number;
	/** Every key starts with this (sent as a parameter)… */
	keyPrefix: string;
	/** …followed by this SQL expression of row `i` of generate_series. */
	keySuffixSql: string;
	/** Also write a claim ID per row, as the node's claim-once rows carry. */
	claimIds?: boolean;
}

/**
 * Creates `public.<table>` with the node's own DDL and loads `keys` with generate_series; the two indexes
 * are built after the bulk load (much faster than row by row).
 */
export async function loadKeyTable(
	dist: Dist,
	pool: Pool,
	table: string,
	{ count, days, keyPrefix, keySuffixSql, claimIds = false }: BulkKeys,
): Promise<TableRef> {
	const ref = dist.internals.tableRef('public', table);
	await pool.query(`DROP TABLE IF EXISTS ${ref.qualified}`);
	const ddl = dist.internals.createTableSql(ref);
	for (const statement of ddl) await pool.query(statement);
	if (count === 0) return ref;
	await pool.query(`ALTER TABLE ${ref.qualified} DROP CONSTRAINT ${table}_pkey`);
	await pool.query(`DROP INDEX ${ref.firstSeenIndex}`);
	// A compact row as a claim leaves it: key and first_seen, and the 12 bytes of its claim ID if asked.
	await pool.query(
		`INSERT INTO ${ref.qualified} (key, first_seen${claimIds ? ', claim_token' : ''})
		 SELECT $2 || ${keySuffixSql}, ts${claimIds ? ", substr(decode(md5(i::text || 'token'), 'hex'), 1, 12)" : ''}
		 FROM generate_series(1, $1::int) AS i,
		      LATERAL (SELECT now() - make_interval(secs => ($3::float8 * 86400.0) * (1 - i::float8 / $1::int)) AS ts) AS t`,
		[count, keyPrefix, days],
	);
	await pool.query(`ALTER TABLE ${ref.qualified} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (key)`);
	await pool.query(ddl[ddl.length - 1]); // CREATE INDEX … (first_seen)
	await pool.query(`VACUUM ANALYZE ${ref.qualified}`);
	// Flush the load's dirty pages now, so what is measured next does not inherit that checkpoint.
	await pool.query('CHECKPOINT').catch(() => undefined);
	return ref;
}

export interface TableSizes {
	heap: number;
	pkey: number;
	firstSeen: number;
	total: number;
}

/** Bytes of a table's heap, primary key, first_seen index and all of it together. */
export async function tableSizes(pool: Pool, ref: TableRef): Promise<TableSizes> {
	const { rows } = await pool.query<TableSizes>(
		`SELECT pg_table_size($1::regclass)::float8 AS heap,
		        pg_relation_size($2::regclass)::float8 AS pkey,
		        pg_relation_size($3::regclass)::float8 AS "firstSeen",
		        pg_total_relation_size($1::regclass)::float8 AS total`,
		[ref.qualified, `public.${ref.table}_pkey`, `public.${ref.firstSeenIndex}`],
	);
	return rows[0];
}
