import type { PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on `client`: committed when it succeeds, rolled back when it (or the
 * commit) fails. A connection that cannot even roll back is broken; the error that broke it is the one
 * reported, and the pool drops the connection when it is released. `begin` opens it (BEGIN, and any
 * setting of the transaction's own sent in the same round trip).
 */
export async function inTransaction<T>(
	client: PoolClient,
	work: () => Promise<T>,
	begin = 'BEGIN',
): Promise<T> {
	await client.query(begin);
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
