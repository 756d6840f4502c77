/**
 * The node template in n8n's queue mode, as it is deployed to scale: a main process, two workers and a
 * webhook processor on one Redis and one Postgres, the packed package installed once in the shared user
 * folder's .n8n/nodes (as a shared volume gives every container). Deliveries go to the webhook processor,
 * the workers run the executions.
 *
 * Which worker ran what: n8n stores no worker id on an execution, but each worker logs
 * `Worker started execution <id>`; and each worker's database connections carry its name
 * (PGAPPNAME), which a trigger on business_log records with every business-step attempt.
 *
 * The workflow is test/e2e/fixtures/queueModeWorkflow.ts: the shipped template with a 10 s lease and an
 * idempotent business write.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import { rowsOf } from '../support/claimTableSql';
import { stackForSuite } from '../../harness/stackForSuite';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { QueueModeCluster } from '../../harness/n8n/queueModeCluster';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { QUEUE_MODE_LEASE_SECONDS, queueModeWorkflows } from './fixtures/queueModeWorkflow';

const EVENTS = Number(process.env.E2E_QUEUE_EVENTS ?? 100);
const COPIES = 4;
const SLOW_EVENTS = 12;
/** How long the business step of a slow event takes: long enough for the kill to land inside it, shorter than the lease. */
const SLOW_SECONDS = 8;
const N8N_SCHEMA = 'n8n_queue';
const WORKER_NAMES = ['worker-1', 'worker-2'];

/**
 * Every business-step attempt is recorded with the worker whose connection ran it, before the row is
 * written (a BEFORE trigger fires even when ON CONFLICT then skips the row); slow events sleep first.
 */
const ATTEMPTS_SQL = `
CREATE UNIQUE INDEX business_log_event_key ON business_log (event_key);
CREATE TABLE business_attempts (
	event_key text NOT NULL,
	worker text NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION record_business_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO business_attempts (event_key, worker) VALUES (NEW.event_key, current_setting('application_name'));
	IF NEW.event_type = 'e2e.slow' THEN PERFORM pg_sleep(${SLOW_SECONDS}); END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER record_business_attempt BEFORE INSERT ON business_log
	FOR EACH ROW EXECUTE FUNCTION record_business_attempt();
`;

const { workflow, businessStep } = queueModeWorkflows();

let db: Pool;
let cluster: QueueModeCluster | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'idem_queue',
		n8nSchema: N8N_SCHEMA,
		workflows: [workflow, businessStep],
		publish: [workflow.id, businessStep.id],
		appSql: ATTEMPTS_SQL,
		launch: (n8n) =>
			QueueModeCluster.create({
				...n8n,
				workers: WORKER_NAMES.length,
				workerEnv: (index) => ({ PGAPPNAME: WORKER_NAMES[index] }),
			}),
	},
	(started) => ({ pool: db, n8n: cluster, executions } = started),
);

const url = () => cluster!.webhookUrl(webhookPathOf(workflow));

/** Per key, how many times the provider was answered "processed". */
function countProcessed() {
	const processed = new Map<string, number>();
	const onAnswer = ({ event, status, body }: ProviderAnswer) => {
		if (status === 200 && body.status === 'processed')
			processed.set(event.key, (processed.get(event.key) ?? 0) + 1);
	};
	return { onAnswer, notOnce: (keys: string[]) => keys.filter((key) => processed.get(key) !== 1) };
}

const oncePerKey = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, 1]));

const workerNamed = (name: string) => cluster!.workers.find((worker) => worker.name === name)!;

/** The executions this worker started after execution `since`, from its log. */
const startedSince = (since: number, name: string) =>
	workerNamed(name)
		.startedExecutions()
		.filter((id) => id > since);

function events(tag: string, count: number, type: string) {
	return Array.from({ length: count }, (_, index) => {
		const id = `evt_${tag}_${index}`;
		return { key: `evt:${id}`, body: JSON.stringify({ id, type }) };
	});
}

it(
	`${EVENTS} events, each delivered ${COPIES} times at once through the webhook processor → both workers run executions, one business step and one row per event`,
	() =>
		explainedByN8nLog(cluster, async () => {
			const since = await executions.lastId();
			const batch = events(randomBytes(3).toString('hex'), EVENTS, 'order.paid');
			const processed = countProcessed();

			const report = await runRetryingProvider({
				url: url(),
				bursts: batch.map((event) => ({ event, copies: COPIES })),
				concurrency: 6,
				retryDelayMs: { min: 500, max: 1_500 },
				maxAttempts: 20,
				deadlineMs: 240_000,
				onAnswer: processed.onAnswer,
			});
			const keys = batch.map((event) => event.key);
			const runs = await executions.settledStatusCounts(workflow.id, since);
			const ran = await executionIdsSince(since);
			const startedBy = WORKER_NAMES.map((name) => startedSince(since, name));
			const startedByWorker = Object.fromEntries(
				WORKER_NAMES.map((name, index) => [name, startedBy[index].length]),
			);
			console.log(
				`queue mode: ${JSON.stringify({ answers: report.answers, seconds: report.seconds, executions: runs, startedByWorker })}`,
			);

			expect(report.undelivered).toEqual([]);
			// Every delivery became an execution, every execution succeeded…
			expect(runs).toEqual({ success: report.requests });
			// …and each ran on a worker: the two workers' logs hold exactly these executions, split between them.
			expect(startedBy.flat().sort((a, b) => a - b)).toEqual(ran);
			expect(startedBy.every((ids) => ids.length > 0)).toBe(true);
			// The provider saw each event processed exactly once.
			expect(processed.notOnce(keys)).toEqual([]);
			// One business-step attempt and one row per event, and business steps ran on both workers.
			const attempts = await attemptsByKey(keys);
			expect(attempts).toEqual(Object.fromEntries(keys.map((key) => [key, [expect.any(String)]])));
			expect(await businessRowsPerKey(db, keys)).toEqual(oncePerKey(keys));
			expect([...new Set(Object.values(attempts).flat())].sort()).toEqual(WORKER_NAMES);
			expect(await claimStatuses(keys)).toEqual({ completed: EVENTS });
		}),
	300_000,
);

it(
	`a worker killed (SIGKILL) while it holds leased claims: after the ${QUEUE_MODE_LEASE_SECONDS} s lease the provider's retries are taken over by the other worker; no event is lost`,
	() =>
		explainedByN8nLog(cluster, async () => {
			const batch = events(randomBytes(3).toString('hex'), SLOW_EVENTS, 'e2e.slow');
			const keys = batch.map((event) => event.key);
			const processed = countProcessed();
			let victim: { name: string; inFlight: number } | undefined;

			const provider = runRetryingProvider({
				url: url(),
				bursts: batch.map((event) => ({ event, copies: 1 })),
				concurrency: SLOW_EVENTS,
				retryDelayMs: { min: 1_000, max: 2_000 },
				maxAttempts: 40,
				deadlineMs: 150_000,
				// A killed worker's job is never re-run and n8n holds its request open for minutes; a provider
				// gives up on it long before that.
				requestTimeoutMs: 20_000,
				onAnswer: processed.onAnswer,
			});
			// Kill once every event is claimed, the worker that is inside the most business steps.
			const killed = (async () => {
				let running: Record<string, number> = {};
				await waitFor(async () => {
					const claims = await claimStatuses(keys);
					if ((claims.processing ?? 0) + (claims.completed ?? 0) < SLOW_EVENTS) return false;
					running = await businessStepsRunningByWorker();
					return Object.keys(running).length > 0;
				}, 90_000);
				const [name, inFlight] = Object.entries(running).sort((a, b) => b[1] - a[1])[0];
				victim = { name, inFlight };
				await workerNamed(name).process.kill();
			})();
			const [report] = await Promise.all([provider, killed]);
			const survivor = WORKER_NAMES.find((name) => name !== victim!.name)!;
			const attempts = await attemptsByKey(keys);
			const heldByVictim = Object.keys(attempts).filter((key) =>
				attempts[key].includes(victim!.name),
			);
			console.log(
				`queue mode, worker killed: ${JSON.stringify({ victim, answers: report.answers, retriesByStatus: report.retriesByStatus, seconds: report.seconds, attempts })}`,
			);

			// No event lost: every one was answered processed exactly once, and its claim is completed.
			expect(report.undelivered).toEqual([]);
			expect(processed.notOnce(keys)).toEqual([]);
			expect(await claimStatuses(keys)).toEqual({ completed: SLOW_EVENTS });
			// The victim was inside business steps when it died. Postgres finished those statements anyway
			// (it notices a dead client only when it next talks to it) and committed them: each shows as
			// an attempt by the victim. After the lease, the survivor claimed the key again and ran the
			// business step a second time. That is the double a kill between the business step's commit and
			// Complete leaves; the idempotent write (ON CONFLICT (event_key) DO NOTHING) keeps it to one row.
			// At least the steps seen running before the kill: one about to start then may have run too.
			expect(heldByVictim.length).toBeGreaterThanOrEqual(Math.max(1, victim!.inFlight));
			for (const key of heldByVictim) expect(attempts[key]).toEqual([victim!.name, survivor]);
			expect(await businessRowsPerKey(db, keys)).toEqual(oncePerKey(keys));
		}),
	300_000,
);

async function executionIdsSince(since: number): Promise<number[]> {
	const { rows } = await db.query<{ id: number }>(
		`SELECT id FROM ${N8N_SCHEMA}.execution_entity WHERE "workflowId" = $1 AND id > $2 ORDER BY id`,
		[workflow.id, since],
	);
	return rows.map((row) => row.id);
}

/** Per key, the workers whose connections ran its business step, in the order the attempts began. */
async function attemptsByKey(keys: string[]): Promise<Record<string, string[]>> {
	const { rows } = await db.query<{ event_key: string; workers: string[] }>(
		`SELECT event_key, array_agg(worker ORDER BY at) AS workers FROM business_attempts
		 WHERE event_key = ANY($1) GROUP BY event_key`,
		[keys],
	);
	return Object.fromEntries(rows.map((row) => [row.event_key, row.workers]));
}

async function claimStatuses(keys: string[]): Promise<Record<string, number>> {
	const counts: Record<string, number> = {};
	for (const row of await rowsOf(db, 'processed_events'))
		if (keys.includes(row.key as string))
			counts[row.status as string] = (counts[row.status as string] ?? 0) + 1;
	return counts;
}

/** Business steps running right now, by the worker whose connection runs them (pg_stat_activity). */
async function businessStepsRunningByWorker(): Promise<Record<string, number>> {
	const { rows } = await db.query<{ worker: string; n: number }>(
		`SELECT application_name AS worker, count(*)::int AS n FROM pg_stat_activity
		 WHERE datname = current_database() AND state = 'active' AND query LIKE 'INSERT INTO business_log%'
		   AND application_name = ANY($1)
		 GROUP BY application_name`,
		[WORKER_NAMES],
	);
	return Object.fromEntries(rows.map((row) => [row.worker, row.n]));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs / 1000} s`);
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}
