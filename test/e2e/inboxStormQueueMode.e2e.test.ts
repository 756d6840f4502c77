/**
 * The inbox's storm (inboxStorm.e2e.test.ts) in n8n's queue mode, as it is deployed to scale: a main
 * process (it fires the Schedule Triggers), two workers (they run every execution: the webhook's and the
 * retry workflows') and a webhook processor, on one Redis. A sender that never retries sends
 * E2E_INBOX_QUEUE_EVENTS (default 300, as in one process) events through the webhook processor, once
 * each, signed; ~10 % fail once, a few poison ones always; the workflows' Postgres server
 * is restarted between one event's business commit and its Complete; two copies of the Retry Due Events
 * workflow run on their schedules (every 3 s). Once that has drained, a worker is SIGKILLed while it runs
 * retried events: events that failed their first delivery sleep in their business step on the retry, and
 * the worker whose connection sleeps is killed. After the lease the other worker's retry runs take them
 * over. In the end every good event's business step ran exactly once, none lost, none doubled, nothing
 * stuck, exactly the poison events are dead letters; the events the killed worker held were written by the
 * other worker. Printed beside it: what the Release template (no kept event) loses of the same sends.
 *
 * The kill comes after the storm drained so that what the worker dies in is the retried events' business
 * steps alone: killed between another event's business commit and its Complete, a non-idempotent step
 * would run again after the lease (README, "What is not guaranteed"). The server drops the statement of a
 * client that is gone (client_connection_check_interval), so the killed steps never commit.
 */
import type { Pool } from 'pg';

import type { RestartBeforeComplete } from '../../harness/faults/restartBeforeComplete';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { QueueModeCluster } from '../../harness/n8n/queueModeCluster';
import { webhookPathOf } from '../../harness/n8n/workflows';
import {
	deliverEachOnce,
	expectDrained,
	fillPlan,
	inboxOutcome,
	STORM,
	stormWorkflows,
	plannedEvent,
	printStorm,
	stormEvents,
	waitFor,
	waitUntilDrained,
	type SenderAnswer,
} from '../support/inbox';
import { stackOnOwnAppServerForSuite } from '../../harness/stackForSuite';

const EVENTS = Number(process.env.E2E_INBOX_QUEUE_EVENTS ?? 300);
/** Events whose retry sleeps, so a worker can be killed inside it; one Take Due run may hold them all. */
const SLOW_RETRIES = 2;
/** Their retries one after another stay well inside the lease. */
const SLOW_RETRY_SECONDS = 5;
const IN_FLIGHT = 6;
const WORKER_NAMES = ['worker-1', 'worker-2'];

const { github, retryIds, stack } = stormWorkflows();

let pool: Pool;
let cluster: QueueModeCluster | undefined;
let executions: N8nExecutions;

const suite = stackOnOwnAppServerForSuite(
	{
		appDatabase: 'inbox_queue',
		n8nSchema: 'n8n_inbox_queue',
		...stack,
		env: { PGAPPNAME: 'n8n-main' },
		launch: (n8n) =>
			QueueModeCluster.create({
				...n8n,
				workers: WORKER_NAMES.length,
				// Each worker's connections carry its name: pg_stat_activity shows which one runs a step,
				// and business_log.written_by which one wrote a row.
				workerEnv: (index) => ({ PGAPPNAME: WORKER_NAMES[index] }),
			}),
	},
	(started) => ({ pool, n8n: cluster, executions } = started),
);

const url = () => cluster!.webhookUrl(webhookPathOf(github));

it(
	`queue mode: ${EVENTS} events sent once each, ~10 % failing once, ${STORM.poisonEvents} poison, Postgres restarted ` +
		'between a business commit and Complete, two scheduled retry workflows on the workers, a worker killed ' +
		'while it runs retried events: every good event once, the poison ones dead letters, nothing stuck',
	() => explainedByN8nLog(cluster, storm),
	8 * 60_000,
);

async function storm(): Promise<void> {
	const started = Date.now();
	const restarted = plannedEvent(0, { attempt: 1, seconds: 1 });
	const regular = stormEvents(EVENTS - SLOW_RETRIES - 1, STORM.poisonEvents, STORM.seed);
	const slowRetries = Array.from({ length: SLOW_RETRIES }, () =>
		plannedEvent(1, { attempt: 2, seconds: SLOW_RETRY_SECONDS }),
	);
	const sent = [...regular];
	sent.splice(Math.floor(sent.length / 2), 0, restarted);
	const events = [...sent, ...slowRetries];
	await fillPlan(pool, events);
	const firstExecution = await executions.lastId();

	// The storm, with the restart aimed at the event in its middle.
	const answers = new Map<string, SenderAnswer>();
	let restart: RestartBeforeComplete | undefined;
	const restarting = suite
		.restartBeforeComplete(restarted.key, { downMs: STORM.restartDownMs, timeoutMs: 120_000 })
		.then((done) => (restart = done));
	await deliverEachOnce(url(), sent, IN_FLIGHT, answers);
	await restarting;
	await waitUntilDrained(pool, 120_000);
	const stormSeconds = Math.round((Date.now() - started) / 1000);

	// Events whose retry sleeps: the worker running one is killed inside it.
	await deliverEachOnce(url(), slowRetries, SLOW_RETRIES, answers);
	let sleeping: Array<{ worker: string; key: string | null }> = [];
	await waitFor(
		async () => (sleeping = await sleepingRetries()).length > 0,
		45_000,
		'a worker running a retried event',
	).catch(() => undefined); // asserted below, after the figures
	const victim = sleeping[0]?.worker;
	const killedKeys = sleeping.filter((step) => step.worker === victim).map((step) => step.key);
	if (victim) await cluster!.workers.find((worker) => worker.name === victim)!.process.kill();
	const survivor = WORKER_NAMES.find((name) => name !== victim)!;
	await waitUntilDrained(pool, 120_000);

	const outcome = await inboxOutcome(pool, events);
	const { rows: written } = await pool.query<{ event_key: string; written_by: string }>(
		'SELECT event_key, written_by FROM business_log WHERE event_key = ANY($1)',
		[slowRetries.map((e) => e.key)],
	);
	const { rows: writers } = await pool.query<{ written_by: string; n: number }>(
		'SELECT written_by, count(*)::int AS n FROM business_log WHERE event_key = ANY($1) GROUP BY 1 ORDER BY 1',
		[events.map((e) => e.key)],
	);
	const retryRuns = await printStorm({
		title: 'inbox storm, queue mode',
		executions,
		retryIds,
		firstExecution,
		events,
		answers,
		outcome,
		startedAt: started,
		figures: {
			restartBeforeComplete: restart ?? null,
			workerKilled: { victim, sleepingRetriedSteps: sleeping },
			slowRetriesWrittenBy: written,
			businessRowsByProcess: writers,
			stormSeconds,
		},
		alsoSay: `, ${victim} killed in ${killedKeys.length} retried step(s)`,
	});

	await expectDrained(pool, events, STORM.maxAttempts);
	expect(restart).toBeDefined();
	expect(victim).toBeDefined();
	for (const event of [...regular, ...slowRetries])
		if (event.failures > 0) expect(answers.get(event.key)).toBe('202 accepted');
	// The executions ran on the workers: every business row was written by one of them.
	expect(
		writers.map((row) => row.written_by).filter((name) => !WORKER_NAMES.includes(name)),
	).toEqual([]);
	// What the killed worker was running, the other worker ran again after the lease.
	for (const key of killedKeys.filter((key): key is string => key !== null))
		expect(written.find((row) => row.event_key === key)?.written_by).toBe(survivor);
	for (const runs of retryRuns) expect(runs.success ?? 0).toBeGreaterThan(0);
}

/** Retried business steps sleeping right now (attempt 2 of a slow retry), by the worker that runs each. */
async function sleepingRetries(): Promise<Array<{ worker: string; key: string | null }>> {
	const { rows } = await pool.query<{ worker: string; query: string }>(
		`SELECT application_name AS worker, query FROM pg_stat_activity
		 WHERE wait_event = 'PgSleep' AND query LIKE 'INSERT INTO business_log%' AND application_name = ANY($1)
		 ORDER BY backend_start`,
		[WORKER_NAMES],
	);
	// n8n's Postgres node sends its values inline (pg-promise formats the query), so the key is in the text.
	return rows.map((row) => ({
		worker: row.worker,
		key: /'(evt:[^']+)'/.exec(row.query)?.[1] ?? null,
	}));
}
