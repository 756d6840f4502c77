// How many of the nodes' connections are busy at once: pg_stat_activity sampled every 2 ms on a connection
// of its own (the nodes' pools name themselves n8n-nodes-idempotency).
import type { Pool } from 'pg';

export function sampleBusyConnections(pool: Pool): { stop(): Promise<number> } {
	let most = 0;
	let running = true;
	const sampling = (async () => {
		const client = await pool.connect();
		try {
			while (running) {
				const { rows } = await client.query(
					"SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'n8n-nodes-idempotency' AND state <> 'idle'",
				);
				most = Math.max(most, rows[0].n);
				await new Promise((resolve) => setTimeout(resolve, 2));
			}
		} finally {
			client.release();
		}
	})();
	return {
		stop: async () => {
			running = false;
			await sampling;
			return most;
		},
	};
}
