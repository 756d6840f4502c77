/**
 * The inbox's storm (inboxStorm.e2e.test.ts) in n8n's queue mode, as it is deployed to scale: a main
 * process (it fires the Schedule Triggers), two workers (they run every execution: the webhook's and the
 * retry copies') and a webhook processor, on one Redis. A sender that never retries sends
 * E2E_INBOX_QUEUE_EVENTS (default 300, as in one process) events through the webhook processor, once
 * each, signed; ~10 % fail once, a few poison ones always; the workflows' Postgres server is restarted
 * while one event's Write and Complete has made its row and its Complete and not committed them; two
 * copies of the GitHub template run its retries on their schedules (every 3 s). Once that has drained, a
 * worker is SIGKILLed while it runs retried events: events that failed their first delivery sleep in their
 * write on the retry, and the worker whose connection sleeps is killed. After the lease the other worker's
 * retry runs take them over. In the end every good event's business row exactly once, none lost, none
 * doubled, nothing stuck, exactly the poison events are dead letters; the events the killed worker held
 * were written by the other worker. Printed beside it: what the Release template (no kept event) loses of
 * the same sends.
 *
 * The kill comes after the storm drained so that what the worker dies in is the retried events' writes
 * alone. The server drops the statement of a client that is gone (client_connection_check_interval), so
 * the killed writes and their Completes never commit.
 */
import type { Pool } from 'pg';

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
	processEnv,
	sleepingWrites,
	stormEvents,
	waitUntilDrained,
	type PlannedEvent,
	type SenderAnswer,
} from '../support/inbox';
import { waitFor } from '../support/waitFor';
import { stackOnOwnAppServerForSuite } from '../../harness/stackForSuite';
import { restartInsideWrite, type RestartInsideWrite } from '../support/restartInsideWrite';

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
		env: processEnv('n8n-main'),
		launch: (n8n) =>
			QueueModeCluster.create({
				...n8n,
				workers: WORKER_NAMES.length,
				// Each worker's connections carry its name: pg_stat_activity shows which one runs a step,
				// and business_log.written_by which one wrote a row.
				workerEnv: (index) => processEnv(WORKER_NAMES[index]),
			}),
	},
	(started) => ({ pool, n8n: cluster, executions } = started),
);

const url = () => cluster!.webhookUrl(webhookPathOf(github));

it(
	`queue mode: ${EVENTS} events sent once each, ~10 % failing once, ${STORM.poisonEvents} poison, Postgres restarted ` +
		'inside a Write and Complete, two scheduled retry copies on the workers, a worker killed ' +
		'while it runs retried events: every good event once, the poison ones dead letters, nothing stuck',
	() => explainedByN8nLog(cluster, storm),
	20 * 60_000,
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
	let restart: RestartInsideWrite | undefined;
	const restarting = restartInsideWrite({
		suite,
		pool,
		key: restarted.key,
		downMs: STORM.restartDownMs,
		timeoutMs: 600_000,
	}).then((done) => (restart = done));
	await deliverEachOnce(url(), sent, IN_FLIGHT, answers);
	await restarting;
	await waitUntilDrained(pool, 120_000);
	const stormSeconds = Math.round((Date.now() - started) / 1000);

	// Events whose retry sleeps: the worker running one is killed inside it.
	await deliverEachOnce(url(), slowRetries, SLOW_RETRIES, answers);
	let sleeping: Array<{ worker: string; key: string }> = [];
	await waitFor(
		async () => (sleeping = await sleepingRetries(slowRetries)).length > 0,
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
			restartInsideWrite: restart ?? null,
			workerKilled: { victim, sleepingRetriedSteps: sleeping },
			slowRetriesWrittenBy: written,
			businessRowsByProcess: writers,
			stormSeconds,
		},
		alsoSay: `, ${victim} killed in ${killedKeys.length} retried step(s)`,
	});

	await expectDrained(pool, events, STORM.maxAttempts);
	// The restart came while the write's row and Complete were made and neither was committed.
	expect(restart?.atRestart).toEqual({ businessRows: 0, claimCompleted: false });
	expect(victim).toBeDefined();
	for (const event of [...regular, ...slowRetries])
		if (event.failures > 0) expect(answers.get(event.key)).toBe('202 accepted');
	// The executions ran on the workers: every business row was written by one of them.
	expect(
		writers.map((row) => row.written_by).filter((name) => !WORKER_NAMES.includes(name)),
	).toEqual([]);
	// What the killed worker was running, the other worker ran again after the lease.
	expect(killedKeys.length).toBeGreaterThan(0);
	for (const key of killedKeys)
		expect(written.find((row) => row.event_key === key)?.written_by).toBe(survivor);
	for (const runs of retryRuns) expect(runs.success ?? 0).toBeGreaterThan(0);
}

/** Retried writes sleeping right now (attempt 2 of a slow retry), by the worker that runs each. */
async function sleepingRetries(
	slowRetries: PlannedEvent[],
): Promise<Array<{ worker: string; key: string }>> {
	const slowKeys = new Set(slowRetries.map((event) => event.key));
	return (await sleepingWrites(pool))
		.filter((write) => WORKER_NAMES.includes(write.process) && slowKeys.has(write.key))
		.map((write) => ({ worker: write.process, key: write.key }));
}
