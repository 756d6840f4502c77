/**
 * workflows/idempotent-api-endpoint.json and workflows/one-at-a-time-per-entity.json in a real n8n 2.x:
 * API callers sending the same Idempotency-Key at once, retrying after completion, reusing a key with
 * another payload or sending none; a holder whose execution died; the same endpoint through PgBouncer in
 * transaction mode; and 50 events for 5 customers, one at a time per customer.
 *
 * The business steps sleep in Postgres (half a second for an order, a tenth for a customer's event) so
 * that repeats really arrive while the first request runs.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import { credentialsFromUrl } from '../../harness/postgres/connections';
import { startTestPostgres, type PostgresServer } from '../../harness/postgres/server';
import { TransactionPooler } from '../../harness/postgres/transactionPooler';
import { IDEMPOTENCY_CREDENTIAL, POSTGRES_CREDENTIAL } from '../../harness/n8n/credentials';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { apiClaimKey, callApi, ordersFor, type ApiAnswer } from '../../harness/webhooks/apiCaller';
import { stackForSuite } from '../../harness/stackForSuite';
import { templateVariant } from './fixtures/templateVariants';

const N8N_SCHEMA = 'n8n_api';
const ORDER_STEP = 'Create Order (example)';
const ENTITY_STEP = 'Business Step (example)';

/** The order insert, half a second long: the time the first request holds its claim. */
const SLOW_ORDER = {
	query:
		"INSERT INTO business_log (event_key, event_type) SELECT $1, 'order.created' FROM pg_sleep(0.5) RETURNING id",
};

/** Each customer event's business step records when it started and ended, with a tenth of a second between. */
const ENTITY_RUNS_SQL = `
CREATE TABLE entity_runs (customer text NOT NULL, event_key text NOT NULL, started_at timestamptz NOT NULL,
                          finished_at timestamptz NOT NULL);
CREATE FUNCTION record_entity_run(customer text, event_key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE started timestamptz := clock_timestamp();
BEGIN
	PERFORM pg_sleep(0.1);
	INSERT INTO entity_runs VALUES (customer, event_key, started, clock_timestamp());
END $$;
`;

const POOLED_CREDENTIAL = {
	id: 'idemPooledPgAcc1',
	name: 'Idempotency Postgres via PgBouncer',
	type: 'idempotencyPostgresApi',
};

const credentials = {
	idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL,
	postgres: POSTGRES_CREDENTIAL,
};
const api = templateVariant('idempotent-api-endpoint.json', {
	credentials,
	nodes: { [ORDER_STEP]: { parameters: SLOW_ORDER } },
});
const apiShortWait = templateVariant('idempotent-api-endpoint.json', {
	path: 'idempotent-api-short-wait',
	credentials,
	nodes: { 'Idempotency Claim': { parameters: { waitSeconds: 1 } } },
});
const apiPooled = templateVariant('idempotent-api-endpoint.json', {
	path: 'idempotent-api-pooled',
	credentials: { ...credentials, idempotencyPostgresApi: POOLED_CREDENTIAL },
	nodes: { [ORDER_STEP]: { parameters: SLOW_ORDER } },
});
const perCustomer = templateVariant('one-at-a-time-per-entity.json', {
	credentials,
	nodes: {
		[ENTITY_STEP]: {
			parameters: {
				query: 'SELECT record_entity_run($1, $2)',
				options: {
					queryReplacement:
						"={{ [ $json.body.customerId, $('Claim Event').item.json.idempotency.key ] }}",
				},
			},
		},
	},
});
/** A Postgres nobody listens on: every claim through it is a database failure. */
const UNREACHABLE_CREDENTIAL = {
	id: 'idemApiNoDbPg001',
	name: 'Unreachable Postgres',
	type: 'idempotencyPostgresApi',
};
const apiDatabaseDown = templateVariant('idempotent-api-endpoint.json', {
	path: 'idempotent-api-database-down',
	credentials: { ...credentials, idempotencyPostgresApi: UNREACHABLE_CREDENTIAL },
});
const workflows = [api, apiShortWait, apiPooled, perCustomer, apiDatabaseDown];

let server: PostgresServer;
let pooler: TransactionPooler | undefined;
let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

stackForSuite(
	async () => {
		server = await startTestPostgres();
		pooler = await TransactionPooler.start(server.url, 4);
		const direct = credentialsFromUrl(server.url);
		return {
			postgresUrl: server.url,
			n8nSchema: N8N_SCHEMA,
			appSql: ENTITY_RUNS_SQL,
			workflows,
			publish: workflows.map((workflow) => workflow.id),
			extraCredentials: [
				{
					...UNREACHABLE_CREDENTIAL,
					data: {
						host: '127.0.0.1',
						port: 1,
						database: 'none',
						user: 'none',
						password: '',
						ssl: 'disable',
					},
				},
				{
					...POOLED_CREDENTIAL,
					data: {
						...direct,
						host: '127.0.0.1',
						port: pooler.port,
						ssl: 'disable',
						maxConnections: 10,
					},
				},
			],
		};
	},
	(started) => ({ pool, n8n, executions } = started),
);
afterAll(async () => {
	await pooler?.stop();
	await server?.stop();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
	callApi(n8n!.webhookUrl(path), body, headers);

const newKey = () => `k_${randomBytes(6).toString('hex')}`;

/** What a comparison of answers looks at: status, body bytes, and the headers the template stores. */
const shape = (answer: ApiAnswer) => ({
	status: answer.status,
	body: answer.body,
	location: answer.headers.get('location'),
	contentType: answer.headers.get('content-type'),
});

describe('idempotent API endpoint (Idempotency-Key)', () => {
	const path = () => webhookPathOf(api);

	step('20 concurrent callers with one key: one order, 20 byte-identical answers', async () => {
		const key = newKey();
		const order = JSON.stringify({ item: 'book', quantity: 1 });
		const since = await executions.lastId();
		const answers = await Promise.all(
			Array.from({ length: 20 }, () => post(path(), order, { 'Idempotency-Key': key })),
		);
		expect(await ordersFor(pool, key)).toBe(1);
		expect(answers[0].status).toBe(201);
		expect(JSON.parse(answers[0].body)).toEqual({
			orderId: expect.stringMatching(/^order_\d+$/),
			status: 'created',
		});
		for (const answer of answers) expect(shape(answer)).toEqual(shape(answers[0]));
		expect(answers[0].headers.get('location')).toBe(
			`/orders/${JSON.parse(answers[0].body).orderId}`,
		);
		const runs = await executions.waitForFinished(api.id, since, 20);
		expect(runs.filter((run) => run.nodesRun.includes(ORDER_STEP))).toHaveLength(1);
		expect(runs.map((run) => run.status)).toEqual(Array(20).fill('success'));
	});

	step(
		'a retry after completion gets the stored answer; the quoted form of the key is the same key',
		async () => {
			const key = newKey();
			const order = JSON.stringify({ item: 'pen', quantity: 3 });
			const first = await post(path(), order, { 'Idempotency-Key': key });
			const retry = await post(path(), order, { 'Idempotency-Key': `"${key}"` });
			expect(first.status).toBe(201);
			expect(shape(retry)).toEqual(shape(first));
			expect(await ordersFor(pool, key)).toBe(1);
		},
	);

	step(
		'the key reused with another payload: 422, and the first order stays the only one',
		async () => {
			const key = newKey();
			await post(path(), JSON.stringify({ item: 'cup', quantity: 1 }), { 'Idempotency-Key': key });
			const reused = await post(path(), JSON.stringify({ item: 'cup', quantity: 2 }), {
				'Idempotency-Key': key,
			});
			expect(reused.status).toBe(422);
			expect(JSON.parse(reused.body)).toMatchObject({ status: 'key_reused' });
			expect(await ordersFor(pool, key)).toBe(1);
		},
	);

	step(
		'the claim database unreachable: 503 with Retry-After, naming the fault; no order',
		async () => {
			const before = (await pool.query('SELECT count(*)::int AS n FROM business_log')).rows[0].n;
			const answer = await callApi(
				n8n!.webhookUrl(webhookPathOf(apiDatabaseDown)),
				JSON.stringify({ item: 'lamp' }),
				{ 'idempotency-key': `k_${randomBytes(4).toString('hex')}` },
			);
			expect(answer.status).toBe(503);
			expect(answer.headers.get('retry-after')).toBe('30');
			expect(JSON.parse(answer.body).message).toMatch(/127\.0\.0\.1:1/);
			expect((await pool.query('SELECT count(*)::int AS n FROM business_log')).rows[0].n).toBe(
				before,
			);
		},
	);

	step('no Idempotency-Key: 400 naming the header; nothing claimed, no order', async () => {
		const before = (await pool.query('SELECT count(*)::int AS n FROM business_log')).rows[0].n;
		const missing = await post(path(), JSON.stringify({ item: 'hat' }));
		expect(missing.status).toBe(400);
		expect(JSON.parse(missing.body).message).toMatch(
			/header "Idempotency-Key" is missing or empty/,
		);
		expect((await pool.query('SELECT count(*)::int AS n FROM business_log')).rows[0].n).toBe(
			before,
		);
	});

	step(
		'a holder that died: after its lease one waiting caller runs the order, all get its answer',
		async () => {
			const key = newKey();
			// The claim of an execution that died mid-step: processing, its lease ending in 3 s.
			await pool.query(
				"INSERT INTO processed_events (key, lease_until, claim_token) VALUES ($1, now() + interval '3 seconds', $2)",
				[apiClaimKey(key), randomBytes(12)],
			);
			const order = JSON.stringify({ item: 'lamp', quantity: 1 });
			const answers = await Promise.all(
				Array.from({ length: 5 }, () => post(path(), order, { 'Idempotency-Key': key })),
			);
			expect(await ordersFor(pool, key)).toBe(1);
			expect(answers[0].status).toBe(201);
			for (const answer of answers) expect(shape(answer)).toEqual(shape(answers[0]));
		},
	);

	step('still running when the wait ends: 409 with Retry-After, no order', async () => {
		const key = newKey();
		await pool.query(
			"INSERT INTO processed_events (key, lease_until, claim_token) VALUES ($1, now() + interval '60 seconds', $2)",
			[apiClaimKey(key), randomBytes(12)],
		);
		const answer = await post(webhookPathOf(apiShortWait), JSON.stringify({ item: 'desk' }), {
			'Idempotency-Key': key,
		});
		expect(answer.status).toBe(409);
		expect(JSON.parse(answer.body)).toMatchObject({ status: 'in_progress' });
		const retryAfter = Number(answer.headers.get('retry-after'));
		expect(retryAfter).toBeGreaterThanOrEqual(1);
		expect(retryAfter).toBeLessThanOrEqual(60);
		expect(await ordersFor(pool, key)).toBe(0);
	});

	step(
		'through PgBouncer in transaction mode: 20 concurrent callers, one order, identical answers',
		async () => {
			const key = newKey();
			const order = JSON.stringify({ item: 'chair', quantity: 4 });
			const answers = await Promise.all(
				Array.from({ length: 20 }, () =>
					post(webhookPathOf(apiPooled), order, { 'Idempotency-Key': key }),
				),
			);
			expect(await ordersFor(pool, key)).toBe(1);
			expect(answers[0].status).toBe(201);
			for (const answer of answers) expect(shape(answer)).toEqual(shape(answers[0]));
		},
	);
});

describe('one event at a time per customer', () => {
	step(
		'50 events for 5 customers at once: each runs once, never two of one customer together',
		async () => {
			const tag = randomBytes(3).toString('hex');
			const events = Array.from({ length: 50 }, (_, i) => ({
				id: `evt_${tag}_${i}`,
				customerId: `cus_${tag}_${i % 5}`,
			}));
			const answers = await Promise.all(
				events.map((event) => post(webhookPathOf(perCustomer), JSON.stringify(event))),
			);
			expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));

			const { rows } = await pool.query<{
				customer: string;
				event_key: string;
				started_at: Date;
				finished_at: Date;
			}>(
				'SELECT customer, event_key, started_at, finished_at FROM entity_runs WHERE customer LIKE $1 ORDER BY customer, started_at',
				[`cus_${tag}_%`],
			);
			expect(rows.map((row) => row.event_key).sort()).toEqual(
				events.map((e) => `evt:${e.id}`).sort(),
			);
			const overlaps = rows.filter(
				(row, i) =>
					i > 0 &&
					rows[i - 1].customer === row.customer &&
					row.started_at < rows[i - 1].finished_at,
			);
			expect(overlaps).toEqual([]);
			expect(new Set(rows.map((row) => row.customer)).size).toBe(5);
			// Different customers ran side by side: some runs of two customers overlap in time.
			const sideBySide = rows.some((row) =>
				rows.some(
					(other) =>
						other.customer !== row.customer &&
						other.started_at < row.finished_at &&
						row.started_at < other.finished_at,
				),
			);
			expect(sideBySide).toBe(true);
			// No lock is left behind: every Lock Customer claim was released.
			const { rows: locks } = await pool.query(
				"SELECT key FROM processed_events WHERE key LIKE 'customer-lock:%' || $1 || '%'",
				[tag],
			);
			expect(locks).toEqual([]);
		},
	);
});

/** A test whose failure message ends with n8n's log tail. */
function step(name: string, body: () => Promise<void>): void {
	it(name, () => explainedByN8nLog(n8n, body), 180_000);
}
