import type { PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on `client`: committed when it succeeds, rolled back when it (or the
 * commit) fails. A connection that cannot even roll back is broken; the error that broke it is the one
 * reported, and the pool drops the connection when it is released.
 */
export async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
	await client.query('BEGIN');
	let committed = false;
	try {
		const value = await work();
		await client.query('COMMIT');
		committed = true;
		return value;
	} finally {
		if (!committed) await client.query('ROLLBACK').catch(() => undefined);
	}
}
