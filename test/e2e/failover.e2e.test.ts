/**
 * The shipped node template (Complete With Write: each event's business insert and its claim's Complete in
 * one transaction) in real n8n 2.x with its Postgres behind PgBouncer (transaction mode, Debian's 1.18),
 * while the primary fails over to a streaming standby in a storm of retried deliveries. The failover is
 * aimed inside one event's write transaction (harness/faults/heldWrite.ts holds it there; failover.ts fails
 * over: the primary stops, the standby is promoted, PgBouncer is pointed at it and reloaded):
 *
 * - synchronous standby: the transaction is let go into its COMMIT while the standby's WAL receiver is
 *   paused, so the commit is written on the primary and waits for the standby (SyncRep) — committed, its
 *   answer not sent — when the primary stops. The standby then receives it and is promoted. Write and
 *   Complete's retry finds the claim completed and reports the write done without writing again (the
 *   lost COMMIT answer, decided by reading the claim row: its output's rowCount is null).
 * - asynchronous standby: the transaction is held after its insert, uncommitted, when the primary stops.
 *   Write and Complete's retry runs the whole transaction again on the promoted standby.
 *
 * Write and Complete rides out what the failover answers it (the cut session, then PgBouncer's 08P01
 * "server login has been failing" for server_login_retry, 15 s). After a late redelivery of every event,
 * each event has exactly one business row and a completed claim, and the sender was told `processed` once
 * per event. n8n's own data lives on another server.
 *
 * The template is imported as shipped but for a 45 s lease (300 s shipped: a claim left processing is taken
 * over by the late redelivery once the lease ends) and Retry Later's backoff (1 s instead of 30 s, so an
 * event whose write failed during the failover runs again within the storm).
 */
import { Client } from 'pg';

import { withClient } from '../../harness/postgres/connections';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { loadShippedWorkflow, webhookPathOf } from '../../harness/n8n/workflows';
import { OwnPostgres } from '../../harness/postgres/server';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { failOver, pauseWalReceiver } from '../../harness/faults/failover';
import { HOLD_WRITES_SQL, WriteHold } from '../../harness/faults/heldWrite';
import type { N8nExecutions } from '../../harness/n8n/executions';
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
let executions: N8nExecutions;

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
			appSql: HOLD_WRITES_SQL,
		};
	},
	(started) => {
		({ n8n, executions } = started);
		started.pool.on('error', () => undefined); // the failover cuts the stack's idle connections
	},
);
afterAll(async () => {
	await pooler?.stop();
	for (const server of servers) await server.stop();
}, 60_000);

describe('the primary fails over inside a write transaction, behind PgBouncer', () => {
	it.each([
		['synchronous', 'its COMMIT, committed and unanswered'],
		['asynchronous', 'the write, uncommitted'],
	])(
		'%s standby, the failover in %s: every event written once',
		(kind) =>
			explainedByN8nLog(n8n, async () => {
				const synchronous = kind === 'synchronous';
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
	// The failover is aimed at an event delivered a third into the storm, held inside its write transaction
	// (the hold's connection goes straight to the primary, as a failover manager's does).
	const target = plan.bursts[Math.floor(plan.bursts.length / 3)].event.key;
	const since = await executions.lastId();
	const synchronous = (await replicationMode(primary)) === 'sync';
	const hold = await WriteHold.install({
		holderUrl: primary.url,
		key: target,
		at: synchronous ? 'commit' : 'write',
	});
	const failover = hold.whenReached(60_000, async ({ pid, release }) => {
		if (!synchronous) return failOver({ primary, standby, pooler });
		// Committed on the primary, waiting for the standby's answer: then the primary stops, and the standby,
		// let go while it shuts down, receives the commit before it is promoted.
		const resume = await pauseWalReceiver(standby);
		try {
			await release();
			await untilSyncRepWait(primary, pid);
		} catch (error) {
			resume();
			throw error;
		}
		return failOver({ primary, standby, pooler, whileStopping: resume });
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
	const targetWrites = await writeOutputsOf(target, since);
	console.log(
		`${tag} standby failover: ${JSON.stringify(
			{
				failedOver,
				storm,
				late: late.answers,
				retryAnswers: answers.retries,
				ranTwice,
				targetWrites,
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
	expect(ranTwice).toEqual([]);
	expect(business).toHaveLength(EVENTS);
	// The aimed event was written by the execution the failover cut: its retry wrote (asynchronous), or found
	// the claim completed by the commit whose answer was lost and wrote nothing more (synchronous).
	expect(targetWrites).toEqual([{ rowCount: synchronous ? null : 1 }]);
	expect(claims.filter((row) => row.lease_until !== null)).toEqual([]);
	expect(claims).toHaveLength(EVENTS);
	expect([...answers.processed.values()].filter((n) => n !== 1)).toEqual([]);
	expect(answers.processed.size).toBe(EVENTS);
}

/** What the template answered, by kind. */
class Answers {
	/** How many times each event was answered 200 `processed`. */
	readonly processed = new Map<string, number>();
	/** Events whose write n8n reported failed (the template's 500 `failed`). */
	readonly failed = new Set<string>();
	/** Answers that made the sender retry, by status and message. */
	readonly retries: Record<string, number> = {};

	readonly record = ({ event, status, body }: ProviderAnswer) => {
		if (status === 200 && body.status === 'processed')
			this.processed.set(event.key, (this.processed.get(event.key) ?? 0) + 1);
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

/** Until the server process `pid` waits for its synchronous standby (its commit is written, unanswered). */
async function untilSyncRepWait(server: OwnPostgres, pid: number): Promise<void> {
	await withClient(server.url, async (client) => {
		for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
			const { rows } = await client.query(
				"SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'SyncRep'",
				[pid],
			);
			if (rows.length > 0) return;
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
		throw new Error('the held commit never waited for the standby');
	});
}

/** What Write and Complete reported writing for `key`, in each execution after `since` that completed it. */
async function writeOutputsOf(key: string, since: number): Promise<Array<{ rowCount: unknown }>> {
	const runs = await executions.waitForFinished(template.id, since, 1, 30_000);
	const writes: Array<{ rowCount: unknown }> = [];
	for (const run of runs.filter((r) => r.nodesRun.includes('Write and Complete'))) {
		const [written] = await executions.nodeOutputs(run.id, 'Write and Complete');
		for (const item of written ?? []) {
			const result = item.idempotency as { key?: string; write?: { rowCount: unknown } };
			if (result?.key === key) writes.push({ rowCount: result.write?.rowCount });
		}
	}
	return writes;
}

/** The errors PgBouncer gave its clients (its log's "pooler error: …" lines), by message. */
function poolerErrors(log: string): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const [, message] of log.matchAll(/pooler error: (.*)/g))
		counts[message] = (counts[message] ?? 0) + 1;
	return counts;
}
