import { Pool } from 'pg';

import type { OwnPostgres } from '../postgres/server';
import { whileCompleteWaits } from './completeWaiting';
import { failOver } from './failover';
import type { TransactionPooler } from '../postgres/transactionPooler';

export interface FailoverBeforeComplete {
	/** The event whose Complete the failover cut. */
	key: string;
	/** Milliseconds from the primary's stop to PgBouncer's reload with the promoted standby. */
	failoverMs: number;
}

/**
 * Lands a failover exactly between one event's business-step commit and its Complete, behind PgBouncer
 * (whileCompleteWaits), as harness/faults/failover.ts does it: the cut Complete's retry meets PgBouncer's
 * "server login has been failing", as it did in the field.
 */
export async function failoverBeforeComplete(options: {
	primary: OwnPostgres;
	standby: OwnPostgres;
	pooler: TransactionPooler;
	key: string;
	timeoutMs: number;
}): Promise<FailoverBeforeComplete> {
	const { primary, standby, pooler, key } = options;
	// Straight to the primary, not through the pooler, as a failover manager watches it.
	const admin = new Pool({ connectionString: primary.url, max: 1 });
	admin.on('error', () => undefined); // the stop ends its connection on purpose
	try {
		return await whileCompleteWaits(
			{ admin, holderUrl: primary.url, key, timeoutMs: options.timeoutMs, fault: 'failover' },
			async () => ({ key, ...(await failOver({ primary, standby, pooler })) }),
		);
	} finally {
		await admin.end().catch(() => undefined);
	}
}
