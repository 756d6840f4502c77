import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { closeAllPools } from '../../nodes/Idempotency/transport/poolRegistry';
import { credentialsFromUrl, withClient } from '../support/database';
import { executeContext, webhookItem } from '../support/executeContext';
import { RestartablePostgres } from '../support/restartablePostgres';

/** A server with room for 8 connections, and three n8n processes that each keep a default pool of 10. */
const MAX_CONNECTIONS = 8;
const PROCESSES = 3;

let server: RestartablePostgres;
beforeAll(async () => {
	server = await RestartablePostgres.start({
		max_connections: String(MAX_CONNECTIONS),
		superuser_reserved_connections: '0',
	});
}, 60_000);
afterAll(async () => {
	await closeAllPools();
	await server?.stop();
});

// Each process has a pool of its own; a different password (ignored by trust auth) gives each its own pool here.
const processCredentials = (process: number) =>
	credentialsFromUrl(server.url, { password: `process-${process}` });

const node = new IdempotencyClaim();

function deliver(process: number, id: string): Promise<INodeExecutionData[][]> {
	return node.execute.call(
		executeContext([webhookItem(JSON.stringify({ id }))], {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: 300,
				options: { table: 'slots' },
			},
			credentials: processCredentials(process),
		}),
	);
}

describe('more n8n processes × pool size than the server has connections', () => {
	it('a delivery that finds no slot fails with a clear error and claims nothing; its retry is processed once', async () => {
		await deliver(0, 'warm-up');
		const events = Array.from({ length: 60 }, (_, i) => `evt_slot_${i}`);
		const firstTry = await Promise.allSettled(events.map((id, i) => deliver(i % PROCESSES, id)));
		const refused = firstTry.filter(
			(result) => result.status === 'rejected',
		) as PromiseRejectedResult[];
		expect(refused.length).toBeGreaterThan(0);
		for (const { reason } of refused) {
			expect((reason as Error).message).toMatch(
				new RegExp(
					`has no connection slot left .*processes × pool size must stay below the server's max_connections`,
				),
			);
		}
		// The provider retries what failed, one at a time; every event ends claimed once, none lost.
		let newCount = firstTry.filter(
			(result) => result.status === 'fulfilled' && result.value[0].length === 1,
		).length;
		for (const [i, result] of firstTry.entries()) {
			if (result.status === 'rejected') {
				const [fresh, duplicate] = await deliver(i % PROCESSES, events[i]);
				expect([fresh.length, duplicate.length]).toEqual([1, 0]);
				expect((fresh[0].json.idempotency as IDataObject).isNew).toBe(true);
				newCount++;
			}
		}
		expect(newCount).toBe(events.length);
		await closeAllPools(); // the processes' idle connections hold every slot
		const rows = await withClient(server.url, (client) =>
			client.query<{ n: number }>(
				`SELECT count(*)::int AS n FROM slots WHERE key LIKE 'evt:evt_slot_%'`,
			),
		);
		expect(rows.rows[0].n).toBe(events.length);
	}, 60_000);
});
