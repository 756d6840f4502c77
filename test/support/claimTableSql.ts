import type { Pool } from 'pg';

// The test oracle for claim tables: each layout a claim table can have, written as plain DDL apart from the
// node's code (store/table/tableSchema.ts), and its rows read alike from either layout. `LAYOUT_COLUMNS.compact`
// is the table the node creates now, `response` included; `original` is what it created before the compact
// layout. Keep Event's side table (`<table>_events`, store/inbox/eventTable.ts) is not a layout of the claim
// table: the node makes it beside any of these, and its shipped DDL is checked in
// test/store/table/shippedTableSql.test.ts.

/** Creates a table with only `key` and `first_seen`, as the original claim template does; returns its name. */
export async function createKeyAndFirstSeenTable(pool: Pool, name: string): Promise<string> {
	await pool.query(
		`CREATE TABLE ${name} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	return name;
}

/** The DDL the node created tables with before the compact layout: what a table made earlier looks like. */
export const ORIGINAL_LAYOUT_DDL = (name: string) => [
	`CREATE TABLE ${name} (${LAYOUT_COLUMNS.original})`,
	`CREATE INDEX ${name}_first_seen_idx ON ${name} (first_seen)`,
];

/** The columns of each layout, as `CREATE TABLE` lists them, in the order the node created them. */
export const LAYOUT_COLUMNS = {
	compact: `first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz, lease_until timestamptz,
	 deliveries integer, key text PRIMARY KEY, claim_token bytea, fingerprint bytea, response json`,
	original: `first_seen timestamptz NOT NULL DEFAULT now(), last_seen timestamptz, lease_until timestamptz,
	 deliveries integer NOT NULL DEFAULT 1, key text PRIMARY KEY, status text NOT NULL DEFAULT 'completed',
	 claim_token text, fingerprint text`,
};

/**
 * The DDL of a claim table an operator split into `partitions` by hash of the key, the way a table that
 * outgrew one is split: the primary key on key alone holds across partitions because key is the partition key.
 */
export const HASH_PARTITIONED_DDL = (name: string, columns: string, partitions = 4) => [
	`CREATE TABLE ${name} (${columns}) PARTITION BY HASH (key)`,
	...Array.from(
		{ length: partitions },
		(_, i) =>
			`CREATE TABLE ${name}_p${i} PARTITION OF ${name} FOR VALUES WITH (MODULUS ${partitions}, REMAINDER ${i})`,
	),
	`CREATE INDEX ${name}_first_seen_idx ON ${name} (first_seen)`,
];

/**
 * Every row of the table, oldest key first, with the columns the original layout has. On a compact table
 * (no status column) a row is shown as the original layout would hold it: status from lease_until,
 * last_seen and deliveries of a row never repeated as its first delivery and 1, the claim ID and the
 * fingerprint in the text the node hands out. So one assertion checks what either layout stored.
 */
export async function rowsOf(
	pool: Pool,
	qualified: string,
): Promise<Array<Record<string, unknown>>> {
	const { rows: columns } = await pool.query<{ name: string }>(
		'SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped',
		[qualified],
	);
	const has = new Set(columns.map((column) => column.name));
	if (has.has('status') || !has.has('lease_until'))
		return (await pool.query(`SELECT * FROM ${qualified} ORDER BY key`)).rows;
	const { rows } = await pool.query(
		`SELECT key, first_seen, COALESCE(last_seen, first_seen) AS last_seen, COALESCE(deliveries, 1) AS deliveries,
		        CASE WHEN lease_until IS NULL THEN 'completed' ELSE 'processing' END AS status, lease_until,
		        claim_token, fingerprint
		 FROM ${qualified} ORDER BY key`,
	);
	return rows.map((row) => ({
		...row,
		claim_token: row.claim_token && claimIdText(row.claim_token),
		fingerprint: row.fingerprint && fingerprintText(row.fingerprint),
	}));
}

/**
 * Bytes of the table's and its indexes' data (main forks), after a VACUUM. The free-space and visibility
 * maps (~100 kB whatever the size) are left out: they would be 16 MiB "per million" of a table of 6,000
 * keys and nothing at scale.
 */
export async function tableDataBytes(pool: Pool, qualified: string): Promise<number> {
	await pool.query(`VACUUM ${qualified}`);
	const { rows } = await pool.query<{ bytes: string }>(
		`SELECT sum(pg_relation_size(relid, 'main')) AS bytes
		 FROM (SELECT $1::regclass AS relid UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass) AS r`,
		[qualified],
	);
	return Number(rows[0].bytes);
}

/** How many rows hold each status (as rowsOf shows it), in status order: what `GROUP BY status` answered. */
export async function claimsByStatus(
	pool: Pool,
	qualified: string,
): Promise<Array<{ status: string; n: number }>> {
	const counts = new Map<string, number>();
	for (const row of await rowsOf(pool, qualified))
		counts.set(row.status as string, (counts.get(row.status as string) ?? 0) + 1);
	return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([status, n]) => ({ status, n }));
}

/** The claim ID a compact row's 12 bytes spell; other bytes were stored from the text itself. */
function claimIdText(bytes: Buffer): string {
	return bytes.length === 12 ? bytes.toString('base64url') : bytes.toString('utf8');
}

/** A compact fingerprint (kind byte, 16 hash bytes) as the node computes it: `json:` / `raw:` and 32 hex digits. */
function fingerprintText(bytes: Buffer): string {
	const kind = ['', 'json:', 'raw:'][bytes[0]] ?? '';
	const hash = bytes.subarray(1);
	return `${kind}${hash.length === 16 ? hash.toString('hex') : hash.toString('utf8')}`;
}
