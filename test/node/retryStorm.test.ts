import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { claimsByStatus } from '../support/claimTableSql';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { seededRandom } from '../../harness/webhooks/seededRandom';
import { planStorm } from '../support/stormPlan';
import { createTestRole, testPool, uniqueTableName } from '../support/database';
import { settleClaimed } from '../support/settleClaimed';

const EVENTS = Number(process.env.STORM_EVENTS ?? 1000);
const WORKERS = 16;
const FAILURE_RATE = 0.1;

describe('retry storm: the node template’s logic under retries, failures and killed connections', () => {
	it('1,000 events, 1–5 concurrent deliveries each, 10 % business failures, all connections killed mid-run → exactly 1,000 business rows', async () => {
		const seed = Number(process.env.STORM_SEED ?? 20261130);
		const random = seededRandom(seed);
		const table = uniqueTableName('storm');
		const business = uniqueTableName('business_log');
		const admin = testPool(2);
		// The storm's connections log in as a role of its own, so killing them spares the suites beside it.
		const role = await createTestRole(admin, 'storm_role');
		const businessPool = role.pool(4);
		await businessPool.query(
			`CREATE TABLE ${business} (id bigserial PRIMARY KEY, event_key text NOT NULL, at timestamptz DEFAULT now())`,
		);
		const credentials = role.credentials({ maxConnections: 8 });
		const claimNode = new IdempotencyClaim();

		const claim = (item: INodeExecutionData) =>
			claimNode.execute.call(
				executeContext([item], {
					parameters: {
						keySource: 'auto',
						claimMode: 'lease',
						leaseSeconds: 60,
						options: { table },
					},
					credentials,
				}),
			);
		const settle = (operation: 'complete' | 'release', claimed: INodeExecutionData) =>
			settleClaimed(operation, claimed, { table, credentials });

		// Every event arrives as a burst of 1–5 concurrent deliveries; the bursts come in random order.
		const plan = planStorm({ events: EVENTS, seed, failureRate: 0, maxCopies: 5, tag: table });
		const queue = plan.bursts.map(({ event, copies }) =>
			Array.from({ length: copies }, () => event.index),
		);
		const stats = {
			deliveries: plan.deliveries,
			attempts: 0,
			processed: 0,
			completedDuplicates: 0,
			inProgressRetries: 0,
			businessFailures: 0,
			errorRetries: 0,
		};
		let killedConnections = 0;
		const killAt = Math.floor(plan.deliveries / 2);

		async function deliver(event: number): Promise<'done' | 'retry'> {
			stats.attempts++;
			if (stats.attempts === killAt) {
				const killed = await admin.query(
					`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`,
					[role.name],
				);
				killedConnections = killed.rowCount ?? 0;
			}
			try {
				const [created, duplicate] = await claim(
					webhookItem(plan.events[event].body, { 'stripe-signature': `t=${stats.attempts}` }),
				);
				if (duplicate.length > 0) {
					const kind = (duplicate[0].json.idempotency as IDataObject).duplicateKind;
					if (kind === 'completed') stats.completedDuplicates++;
					else stats.inProgressRetries++;
					return kind === 'completed' ? 'done' : 'retry';
				}
				const claimed = created[0];
				try {
					if (random() < FAILURE_RATE) throw new Error('injected business failure');
					await businessPool.query(`INSERT INTO ${business} (event_key) VALUES ($1)`, [
						(claimed.json.idempotency as IDataObject).key,
					]);
				} catch {
					stats.businessFailures++;
					await settle('release', claimed);
					return 'retry';
				}
				await settle('complete', claimed);
				stats.processed++;
				return 'done';
			} catch (error) {
				if (process.env.STORM_DEBUG) console.log('delivery error', (error as Error).message);
				// The execution failed (e.g. its connection was killed): the provider sees a 500 and retries.
				stats.errorRetries++;
				return 'retry';
			}
		}

		const started = Date.now();
		const workers = Array.from({ length: WORKERS }, async () => {
			for (let burst = queue.shift(); burst !== undefined; burst = queue.shift()) {
				const outcomes = await Promise.all(burst.map((event) => deliver(event)));
				burst.forEach((event, i) => {
					// Providers retry later, not at once: put the delivery back further down the queue.
					if (outcomes[i] === 'retry')
						queue.splice(Math.min(queue.length, WORKERS + Math.floor(random() * 50)), 0, [event]);
				});
			}
		});
		await Promise.all(workers);
		const seconds = (Date.now() - started) / 1000;

		const rows = await admin.query(
			`SELECT count(*)::int AS total, count(DISTINCT event_key)::int AS distinct_keys FROM ${business}`,
		);
		const claims = { rows: await claimsByStatus(admin, table) };

		console.log(
			`retry storm (seed ${seed}): ${JSON.stringify({ ...stats, killedConnections, seconds, businessRows: rows.rows[0], claims: claims.rows })}`,
		);
		expect(killedConnections).toBeGreaterThan(0);
		expect(stats.businessFailures).toBeGreaterThan(50);
		expect(rows.rows[0]).toEqual({ total: EVENTS, distinct_keys: EVENTS });
		expect(claims.rows).toEqual([{ status: 'completed', n: EVENTS }]);
		await businessPool.end();
		await role.drop();
		await admin.end();
	});
});
