// Write-ahead log a stretch of work caused: how many bytes the server inserted into its WAL meanwhile.
import type { Pool } from 'pg';

import { timed } from './stats';

/** Runs `run`, timed, and counts the bytes of write-ahead log the server wrote meanwhile (all of it). */
export async function timedWithWal(
	pool: Pool,
	run: () => Promise<void>,
): Promise<{ ms: number; wal: number }> {
	const before = await pool.query<{ lsn: string }>(
		'SELECT pg_current_wal_insert_lsn()::text AS lsn',
	);
	const { ms } = await timed(run);
	const { rows } = await pool.query<{ bytes: number }>(
		'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8 AS bytes',
		[before.rows[0].lsn],
	);
	return { ms, wal: rows[0].bytes };
}
