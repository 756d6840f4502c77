/**
 * The node template in n8n's queue mode, as it is deployed to scale: a main process, two workers and a
 * webhook processor on one Redis and one Postgres, the packed package installed once in the shared user
 * folder's .n8n/nodes (as a shared volume gives every container). Deliveries go to the webhook processor,
 * the workers run the executions.
 *
 * Which worker ran what: n8n stores no worker id on an execution, but each worker logs
 * `Worker started execution <id>`; and each worker's database connections carry its name in a setting of
 * their own (PGOPTIONS: the package's pool names its connections itself, so PGAPPNAME does not reach
 * them), which a trigger on business_log records with every business write, in the write's own
 * transaction (so only a committed write leaves its record), and shows while the write is in flight.
 *
 * The workflow is test/e2e/fixtures/queueModeWorkflow.ts: the shipped template with a 10 s lease. Its
 * business write is the shipped one (Complete With Write, a plain INSERT into business_log, which has no
 * unique key here): a write that ran twice would show as two rows.
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
import { QUEUE_MODE_LEASE_SECONDS, queueModeWorkflow } from './fixtures/queueModeWorkflow';

const EVENTS = Number(process.env.E2E_QUEUE_EVENTS ?? 100);
const COPIES = 4;
const SLOW_EVENTS = 12;
/** How long the business step of a slow event takes: long enough for the kill to land inside it, shorter than the lease. */
const SLOW_SECONDS = 8;
const N8N_SCHEMA = 'n8n_queue';
const WORKER_NAMES = ['worker-1', 'worker-2'];

/** The advisory-lock class under which a business write in flight shows its key in pg_locks. */
const IN_FLIGHT_LOCK_CLASS = 39;

/** The connection setting that names a worker (PGOPTIONS of its process). */
const WORKER_SETTING = 'e2e.worker';

/**
 * Every business write records the worker whose connection ran it, in the write's transaction (rolled back
 * with it), and holds a transaction-scoped advisory lock on its key's hash, which pg_locks shows until the
 * transaction ends, with the worker as the connection's application_name (set for that transaction only);
 * slow events then sleep.
 */
const ATTEMPTS_SQL = `
CREATE TABLE business_attempts (
	event_key text NOT NULL,
	worker text NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION record_business_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO business_attempts (event_key, worker) VALUES (NEW.event_key, current_setting('${WORKER_SETTING}'));
	PERFORM set_config('application_name', current_setting('${WORKER_SETTING}'), true);
	PERFORM pg_advisory_xact_lock(${IN_FLIGHT_LOCK_CLASS}, hashtext(NEW.event_key));
	IF NEW.event_type = 'e2e.slow' THEN PERFORM pg_sleep(${SLOW_SECONDS}); END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER record_business_attempt BEFORE INSERT ON business_log
	FOR EACH ROW EXECUTE FUNCTION record_business_attempt();
`;

const workflow = queueModeWorkflow();

let db: Pool;
let cluster: QueueModeCluster | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'idem_queue',
		n8nSchema: N8N_SCHEMA,
		workflows: [workflow],
		publish: [workflow.id],
		appSql: ATTEMPTS_SQL,
		launch: (n8n) =>
			QueueModeCluster.create({
				...n8n,
				workers: WORKER_NAMES.length,
				workerEnv: (index) => ({ PGOPTIONS: `-c ${WORKER_SETTING}=${WORKER_NAMES[index]}` }),
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
	return {
		onAnswer,
		notOnce: (keys: string[]) => keys.filter((key) => processed.get(key) !== 1),
		moreThanOnce: (keys: string[]) => keys.filter((key) => (processed.get(key) ?? 0) > 1),
	};
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
	`${EVENTS} events, each delivered ${COPIES} times at once through the webhook processor → both workers run executions, one business write and one row per event`,
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
				// 240 s ran out on a 2-core machine at load 30–47 (12 events never sent); 420 s leaves room.
				deadlineMs: 420_000,
				onAnswer: processed.onAnswer,
			});
			const keys = batch.map((event) => event.key);
			// The deliveries' executions; the template's retry schedule runs beside them (on the workers too).
			const runs = await executions.settledStatusCounts(workflow.id, since, undefined, 'webhook');
			const ran = await executionIdsSince(since);
			const ranByWebhook = await executionIdsSince(since, 'webhook');
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
			// …and each ran on a worker: the two workers' logs hold every one of them and only this workflow's
			// executions, split between them.
			const started = startedBy.flat();
			expect(ranByWebhook.filter((id) => !started.includes(id))).toEqual([]);
			expect(started.filter((id) => !ran.includes(id))).toEqual([]);
			expect(startedBy.every((ids) => ids.length > 0)).toBe(true);
			// The provider saw each event processed exactly once.
			expect(processed.notOnce(keys)).toEqual([]);
			// One committed business write and one row per event, and writes ran on both workers.
			const attempts = await attemptsByKey(keys);
			expect(attempts).toEqual(Object.fromEntries(keys.map((key) => [key, [expect.any(String)]])));
			expect(await businessRowsPerKey(db, keys)).toEqual(oncePerKey(keys));
			expect([...new Set(Object.values(attempts).flat())].sort()).toEqual(WORKER_NAMES);
			expect(await claimStatuses(keys)).toEqual({ completed: EVENTS });
		}),
	600_000,
);

it(
	`a worker killed (SIGKILL) inside business writes: its writes roll back with their Complete, after the ${QUEUE_MODE_LEASE_SECONDS} s lease the other worker writes each event once; none lost, doubled or stuck`,
	() =>
		explainedByN8nLog(cluster, async () => {
			const batch = events(randomBytes(3).toString('hex'), SLOW_EVENTS, 'e2e.slow');
			const keys = batch.map((event) => event.key);
			const processed = countProcessed();
			let victim: { name: string; inFlight: string[] } | undefined;

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
			// Kill once every event is claimed, the worker that is inside the most business writes.
			const killed = (async () => {
				let running: Record<string, string[]> = {};
				await waitFor(async () => {
					const claims = await claimStatuses(keys);
					if ((claims.processing ?? 0) + (claims.completed ?? 0) < SLOW_EVENTS) return false;
					running = await writesInFlightByWorker(keys);
					return Object.keys(running).length > 0;
				}, 90_000);
				const [name, inFlight] = Object.entries(running).sort(
					(a, b) => b[1].length - a[1].length,
				)[0];
				victim = { name, inFlight };
				await workerNamed(name).process.kill();
			})();
			const [report] = await Promise.all([provider, killed]);
			const survivor = WORKER_NAMES.find((name) => name !== victim!.name)!;
			const attempts = await attemptsByKey(keys);
			console.log(
				`queue mode, worker killed: ${JSON.stringify({ victim, answers: report.answers, retriesByStatus: report.retriesByStatus, seconds: report.seconds, attempts })}`,
			);

			// None stuck: the provider got a 2xx for every event and every claim is completed. After the lease an
			// event the victim held is run again by the provider's retry or by the template's own schedule
			// (the provider then hears "duplicate"), so it is answered "processed" once at most.
			expect(report.undelivered).toEqual([]);
			expect(processed.moreThanOnce(keys)).toEqual([]);
			expect(await claimStatuses(keys)).toEqual({ completed: SLOW_EVENTS });
			// The victim was inside business writes when it died (seen in pg_locks). Postgres finished those
			// statements anyway, but their transaction never got its COMMIT: each write rolled back with its
			// Complete, leaving no record. The survivor then wrote each of those events, once.
			expect(victim!.inFlight.length).toBeGreaterThanOrEqual(1);
			for (const key of victim!.inFlight)
				expect({ key, writes: attempts[key] }).toEqual({ key, writes: [survivor] });
			// None doubled, none lost: one committed write and one row per event.
			expect(attempts).toEqual(Object.fromEntries(keys.map((key) => [key, [expect.any(String)]])));
			expect(await businessRowsPerKey(db, keys)).toEqual(oncePerKey(keys));
		}),
	300_000,
);

/** The workflow's executions after `since` (those a webhook started, with `mode`). */
async function executionIdsSince(since: number, mode?: 'webhook'): Promise<number[]> {
	const { rows } = await db.query<{ id: number }>(
		`SELECT id FROM ${N8N_SCHEMA}.execution_entity
		 WHERE "workflowId" = $1 AND id > $2 AND ($3::text IS NULL OR mode = $3) ORDER BY id`,
		[workflow.id, since, mode ?? null],
	);
	return rows.map((row) => row.id);
}

/** Per key, the workers whose connections committed its business write, in the order the writes began. */
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

/**
 * The keys whose business write is in flight right now (not committed), by the worker whose connection
 * runs it: the advisory locks the write's trigger holds until its transaction ends.
 */
async function writesInFlightByWorker(keys: string[]): Promise<Record<string, string[]>> {
	const { rows } = await db.query<{ worker: string; keys: string[] }>(
		`SELECT a.application_name AS worker, array_agg(k.key ORDER BY k.key) AS keys
		 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		 JOIN unnest($1::text[]) AS k(key) ON l.objid::text::bigint = (hashtext(k.key)::bigint & 4294967295)
		 WHERE l.locktype = 'advisory' AND l.classid::text::int = $2 AND l.objsubid = 2 AND l.granted
		   AND a.datname = current_database() AND a.application_name = ANY($3)
		 GROUP BY a.application_name`,
		[keys, IN_FLIGHT_LOCK_CLASS, WORKER_NAMES],
	);
	return Object.fromEntries(rows.map((row) => [row.worker, row.keys]));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs / 1000} s`);
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}
