/**
 * workflows/idempotent-api-endpoint.json in n8n's queue mode (a main process, two workers and a webhook
 * processor on one Redis and one Postgres): callers that wait for a claim held on another worker, and a
 * worker killed while it holds one. Waiting uses no session state and no held connection, so a waiter on
 * one worker sees the holder on the other only through the table.
 *
 * The order insert sleeps 4 s and is idempotent (a unique event_key, ON CONFLICT … DO UPDATE … RETURNING
 * id), as a business step must be where a killed worker's statement still commits on the server (see
 * docs/deploying.md, queue mode); the claim's lease is 10 s.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import { IDEMPOTENCY_CREDENTIAL, POSTGRES_CREDENTIAL } from '../../harness/n8n/credentials';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { QueueModeCluster } from '../../harness/n8n/queueModeCluster';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { callApi, ordersFor } from '../../harness/webhooks/apiCaller';
import { stackForSuite } from '../../harness/stackForSuite';
import { templateVariant } from './fixtures/templateVariants';

const N8N_SCHEMA = 'n8n_api_queue';
// 6 s more than the order takes: a busy worker's holder is never taken over in the 20-caller test.
const LEASE_SECONDS = 10;

const workflow = templateVariant('idempotent-api-endpoint.json', {
	path: 'idempotent-api-queue',
	credentials: { idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL, postgres: POSTGRES_CREDENTIAL },
	nodes: {
		'Idempotency Claim': { parameters: { leaseSeconds: LEASE_SECONDS, waitSeconds: 20 } },
		'Create Order (example)': {
			parameters: {
				query:
					"INSERT INTO business_log (event_key, event_type) SELECT $1, 'order.created' FROM pg_sleep(4) " +
					'ON CONFLICT (event_key) DO UPDATE SET event_type = EXCLUDED.event_type RETURNING id',
			},
		},
	},
});

let pool: Pool;
let cluster: QueueModeCluster | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'idem_api_queue',
		n8nSchema: N8N_SCHEMA,
		appSql: 'CREATE UNIQUE INDEX business_log_event_key ON business_log (event_key);',
		workflows: [workflow],
		publish: [workflow.id],
		launch: (n8n) => QueueModeCluster.create({ ...n8n, workers: 2 }),
	},
	(started) => ({ pool, n8n: cluster, executions } = started),
);

/** The answer's status and body: what every caller of one key must get alike. */
async function post(key: string, body: string, signal?: AbortSignal) {
	const url = cluster!.webhookUrl(webhookPathOf(workflow));
	const { status, body: answer } = await callApi(url, body, { 'idempotency-key': key }, signal);
	return { status, body: answer };
}

const newKey = () => `q_${randomBytes(6).toString('hex')}`;

it(
	'20 concurrent callers through the webhook processor: one order, 20 identical answers, both workers waiting',
	() =>
		explainedByN8nLog(cluster, async () => {
			const key = newKey();
			const since = await executions.lastId();
			const order = JSON.stringify({ item: 'table', quantity: 1 });
			const answers = await Promise.all(Array.from({ length: 20 }, () => post(key, order)));
			expect(await ordersFor(pool, key)).toBe(1);
			expect(answers[0].status).toBe(201);
			for (const answer of answers) expect(answer).toEqual(answers[0]);
			const ranOn = cluster!.workers.map(
				(worker) => worker.startedExecutions().filter((id) => id > since).length,
			);
			expect(ranOn.reduce((a, b) => a + b)).toBe(20);
			expect(ranOn.every((count) => count > 0)).toBe(true);
		}),
	120_000,
);

it(
	`a worker killed while it holds the claim: after the ${LEASE_SECONDS} s lease a caller waiting on the other worker runs it, and every waiting caller gets its answer`,
	() =>
		explainedByN8nLog(cluster, async () => {
			const key = newKey();
			const order = JSON.stringify({ item: 'sofa', quantity: 1 });
			const since = await executions.lastId();
			const holderRequest = new AbortController();
			const holder = post(key, order, holderRequest.signal).catch(() => undefined);
			// The worker that took the holder's execution, once its business step is under way.
			let victim: QueueModeCluster['workers'][number] | undefined;
			const deadline = Date.now() + 30_000;
			while (!victim && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 100));
				victim = cluster!.workers.find((worker) =>
					worker.startedExecutions().some((id) => id > since),
				);
			}
			expect(victim).toBeDefined();
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			await victim!.process.kill();

			const answers = await Promise.all(Array.from({ length: 5 }, () => post(key, order)));
			holderRequest.abort();
			await holder;
			expect(answers[0].status).toBe(201);
			for (const answer of answers) expect(answer).toEqual(answers[0]);
			expect(await ordersFor(pool, key)).toBe(1);
		}),
	180_000,
);
