import type { Pool } from 'pg';

import { SETTLE_RETRY, withTransientRetry } from './transientErrors';
import { processClock } from '../../../shared/processClock';

/**
 * Sends one `DELETE … LIMIT <batch>` statement again and again until a batch deletes fewer rows than its
 * size, so a table with millions of keys is never locked for long. After each batch it pauses as long as
 * the batch took, so claims get the server at least half the time.
 */
export async function deleteInBatches(
	pool: Pool,
	sql: string,
	values: unknown[],
	batchSize: number,
): Promise<{ deleted: number; batches: number }> {
	let deleted = 0;
	let batches = 0;
	for (;;) {
		const started = processClock.nowMs();
		const { value } = await withTransientRetry(
			pool,
			(client) => client.query(sql, values),
			SETTLE_RETRY,
		);
		const count = value.rowCount ?? 0;
		batches++;
		deleted += count;
		if (count < batchSize) break;
		await processClock.sleep(processClock.nowMs() - started);
	}
	return { deleted, batches };
}
