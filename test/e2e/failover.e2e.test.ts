/**
 * The node template in real n8n 2.x with its Postgres behind PgBouncer (transaction mode, Debian's 1.18)
 * while the primary fails over to a streaming standby, in a storm of retried deliveries: the primary stops
 * right after one event's business step committed and before its Mark Key Completed settled the claim, the
 * standby is promoted, and PgBouncer is pointed at it and reloaded (harness/faults/failoverBeforeComplete.ts).
 * Once with a synchronous standby (the primary's commits wait for it), once with an asynchronous one, on one
 * n8n. Complete rides out what the failover answers it (the cut session, then PgBouncer's 08P01 "server login
 * has been failing" for server_login_retry, 15 s) instead of taking its failure output: no answer says
 * "completion pending", and after a late redelivery of every event each event has run its business step
 * once and its claim is completed. n8n's own data lives on another server.
 *
 * The template is imported as shipped but for a 45 s lease (300 s shipped: a claim left processing is taken
 * over by the late redelivery once the lease ends) and Retry Later's backoff (1 s instead of 30 s, so an
 * event whose business step failed during the failover runs again within the storm).
 */
import { Client } from 'pg';

import { withClient } from '../../harness/postgres/connections';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { loadShippedWorkflow, webhookPathOf } from '../../harness/n8n/workflows';
import { OwnPostgres } from '../../harness/postgres/server';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { failoverBeforeComplete } from '../../harness/faults/failoverBeforeComplete';
import { stackForSuite } from '../../harness/stackForSuite';
import { planStorm, type StormEvent } from '../support/stormPlan';
import { TransactionPooler } from '../../harness/postgres/transactionPooler';

const EVENTS = 16;
const LEASE_SECONDS = 45;
const RETRY_BACKOFF = { baseSeconds: 1, factor: 2, capSeconds: 4, jitter: 0.2 };
const shipped = loadShippedWorkflow('idempotency-claim-template.json');
const template = {
	...shipped,
	nodes: shipped.nodes.map((node) => {
		if (node.name === 'Idempotency Claim')
			return { ...node, parameters: { ...node.parameters, leaseSeconds: LEASE_SECONDS } };
		if (node.name === 'Retry Later')
			return { ...node, parameters: { ...node.parameters, backoff: RETRY_BACKOFF } };
		return node;
	}),
};

/** The primary of the moment: each test fails it over to a standby of its own. */
let primary: OwnPostgres;
const servers: OwnPostgres[] = [];
let pooler: TransactionPooler;
let n8n: N8nInstance | undefined;

stackForSuite(
	async () => {
		primary = await OwnPostgres.start({ database: 'idem_failover' });
		servers.push(primary);
		// The workflows' credentials name the pooler; it logs in as the one (trusted) user.
		pooler = await TransactionPooler.start(primary.url, 8);
		return {
			appServerUrl: pooler.url(primary.url),
			n8nSchema: 'n8n_failover',
			workflows: [template],
			publish: [template.id],
		};
	},
	(started) => {
		n8n = started.n8n;
		started.pool.on('error', () => undefined); // the failover cuts the stack's idle connections
	},
);
afterAll(async () => {
	await pooler?.stop();
	for (const server of servers) await server.stop();
}, 60_000);

describe('the primary fails over between a business step and its Complete, behind PgBouncer', () => {
	it.each([
		['synchronous', true],
		['asynchronous', false],
	])(
		'%s standby: Complete waits for the promoted standby; every event runs once',
		(kind, synchronous) =>
			explainedByN8nLog(n8n, async () => {
				const standby = await primary.startStandby({ synchronous });
				servers.push(standby);
				expect(await replicationMode(primary)).toBe(synchronous ? 'sync' : 'async');
				await stormThroughFailover(kind, standby);
			}),
		240_000,
	);
});

/** How the primary's one standby replicates: 'sync' or 'async', once it streams. */
async function replicationMode(server: OwnPostgres): Promise<string> {
	return withClient(server.url, async (client) => {
		for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
			const { rows } = await client.query<{ sync_state: string }>(
				"SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
			);
			if (rows.length === 1) return rows[0].sync_state;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		throw new Error('the standby never streamed');
	});
}

async function stormThroughFailover(tag: string, standby: OwnPostgres): Promise<void> {
	const plan = planStorm({ events: EVENTS, seed: 37, failureRate: 0, maxCopies: 3, tag });
	const keys = plan.events.map((event) => event.key);
	const url = n8n!.webhookUrl(webhookPathOf(template));
	// The failover is aimed at an event delivered a third into the storm. Its business step takes a second, so
	// the claim row can be locked before Complete comes.
	const target = plan.bursts[Math.floor(plan.bursts.length / 3)].event.key;
	await withClient(primary.url, (client) =>
		client.query(
			`CREATE OR REPLACE FUNCTION slow_business() RETURNS trigger LANGUAGE plpgsql AS $$
			 BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
			 CREATE OR REPLACE TRIGGER slow_business BEFORE INSERT ON business_log
			 FOR EACH ROW WHEN (NEW.event_key = '${target.replace(/'/g, "''")}') EXECUTE FUNCTION slow_business()`,
		),
	);
	const failover = failoverBeforeComplete({
		primary,
		standby,
		pooler,
		key: target,
		timeoutMs: 60_000,
	});
	failover.catch(() => undefined); // awaited after the storm

	const answers = new Answers();
	const storm = await runRetryingProvider({
		url,
		bursts: plan.bursts,
		concurrency: 4,
		retryDelayMs: { min: 300, max: 1_000 },
		maxAttempts: 1_000,
		deadlineMs: 150_000,
		onAnswer: answers.record,
	});
	const failedOver = await failover;
	primary = standby; // for the next test, even when this one fails below
	// A sender's late retry of every event, once the lease of any claim still processing has run out.
	const leaseEnd = await withClient(standby.url, async (client) => {
		const { rows } = await client.query<{ until: Date | null }>(
			'SELECT max(lease_until) AS until FROM processed_events WHERE key = ANY($1)',
			[keys],
		);
		return rows[0].until;
	});
	if (leaseEnd)
		await new Promise((resolve) => setTimeout(resolve, leaseEnd.getTime() - Date.now() + 1_000));
	const late = await runRetryingProvider({
		url,
		bursts: plan.events.map((event: StormEvent) => ({ event, copies: 1 })),
		concurrency: 4,
		retryDelayMs: { min: 300, max: 1_000 },
		maxAttempts: 100,
		deadlineMs: 60_000,
		onAnswer: answers.record,
	});

	const { business, claims } = await withClient(standby.url, async (client) => ({
		business: await businessRows(client, keys),
		claims: (
			await client.query<{ key: string; lease_until: Date | null }>(
				'SELECT key, lease_until FROM processed_events WHERE key = ANY($1)',
				[keys],
			)
		).rows,
	}));
	const ranTwice = business.filter((row) => row.n !== 1);
	console.log(
		`${tag} standby failover: ${JSON.stringify(
			{
				failedOver,
				storm,
				late: late.answers,
				retryAnswers: answers.retries,
				ranTwice,
				poolerErrors: poolerErrors(pooler.log),
			},
			null,
			1,
		)}`,
	);

	expect(failedOver.key).toBe(target);
	expect(storm.undelivered).toEqual([]);
	expect(late.undelivered).toEqual([]);
	// Every answer that was not a 2xx asked the sender to retry: a 5xx, or 409 while another delivery runs.
	const statuses = Object.keys(answers.retries).map((label) => Number(label.split(' ')[0]));
	expect(statuses.filter((status) => status !== 409 && (status < 500 || status > 599))).toEqual([]);
	// Complete never gave up: its failure output answers "completion pending".
	expect(answers.completionPending).toEqual([]);
	// An event may run twice only when n8n reported its business step failed (a commit whose answer the stop
	// cut off: docs/deploying.md); the event the failover was aimed at, never.
	expect(
		ranTwice.filter(
			(row) => row.n !== 2 || row.event_key === target || !answers.failed.has(row.event_key),
		),
	).toEqual([]);
	expect(business).toHaveLength(EVENTS);
	expect(claims.filter((row) => row.lease_until !== null)).toEqual([]);
	expect(claims).toHaveLength(EVENTS);
	expect([...answers.processed.values()].filter((n) => n !== 1)).toEqual([]);
	expect(answers.processed.size).toBe(EVENTS);
}

/** What the template answered, by kind. */
class Answers {
	/** How many times each event was answered 200 `processed`. */
	readonly processed = new Map<string, number>();
	/** Events answered "processed (completion pending)": Complete took its failure output. */
	readonly completionPending: string[] = [];
	/** Events whose business step n8n reported failed (the template's 500 `failed`). */
	readonly failed = new Set<string>();
	/** Answers that made the sender retry, by status and message. */
	readonly retries: Record<string, number> = {};

	readonly record = ({ event, status, body }: ProviderAnswer) => {
		if (status === 200 && body.status === 'processed') {
			this.processed.set(event.key, (this.processed.get(event.key) ?? 0) + 1);
			if (body.completion === 'pending') this.completionPending.push(event.key);
		}
		if (status === 500 && body.status === 'failed') this.failed.add(event.key);
		if (status < 200 || status >= 300) {
			const label = `${status} ${String(body.message ?? body.status ?? body.error ?? '')}`;
			this.retries[label] = (this.retries[label] ?? 0) + 1;
		}
	};
}

async function businessRows(
	client: Client,
	keys: string[],
): Promise<Array<{ event_key: string; n: number }>> {
	const { rows } = await client.query<{ event_key: string; n: number }>(
		'SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key = ANY($1) GROUP BY 1',
		[keys],
	);
	return rows;
}

/** The errors PgBouncer gave its clients (its log's "pooler error: …" lines), by message. */
function poolerErrors(log: string): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const [, message] of log.matchAll(/pooler error: (.*)/g))
		counts[message] = (counts[message] ?? 0) + 1;
	return counts;
}
