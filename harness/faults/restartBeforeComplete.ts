import type { Pool } from 'pg';

import type { OwnPostgres } from '../postgres/server';
import { whileCompleteWaits } from './completeWaiting';

export interface RestartBeforeComplete {
	/** The event whose Complete the restart cut. */
	key: string;
	/** Milliseconds from the business row's commit to the restart. */
	afterBusinessCommitMs: number;
	downMs: number;
}

/**
 * Lands a Postgres restart exactly between one event's business-step commit and its Complete
 * (whileCompleteWaits): the server shuts down (fast, clients cut) and is started again after `downMs`.
 * Everything of the template that talks to that server at that moment sees the outage too.
 */
export async function restartBeforeComplete(options: {
	server: OwnPostgres;
	admin: Pool;
	adminUrl: string;
	key: string;
	downMs: number;
	timeoutMs: number;
}): Promise<RestartBeforeComplete> {
	const { server, admin, adminUrl, key, downMs } = options;
	return whileCompleteWaits(
		{ admin, holderUrl: adminUrl, key, timeoutMs: options.timeoutMs, fault: 'restart' },
		async (afterBusinessCommitMs) => {
			await server.restart(downMs);
			return { key, afterBusinessCommitMs, downMs };
		},
	);
}
