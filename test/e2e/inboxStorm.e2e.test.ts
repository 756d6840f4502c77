/**
 * Kept events through a storm in real n8n 2.x, every good event run once: a sender that never retries (GitHub's way: each event
 * delivered once, signed, 8 in flight) sends E2E_INBOX_STORM_EVENTS (default 300) events through the
 * shipped GitHub template (Keep Event, Write and Complete, Retry Later). About 10 % of the events' business
 * writes fail once and a few poison events fail always (a trigger on business_log, planned by the event's
 * attempt count). n8n is SIGKILLed three times, each time while two events' writes run; the workflows'
 * Postgres server is restarted (fast shutdown, seconds down) while one event's write has inserted its row
 * and made its Complete and not yet committed (test/support/restartInsideWrite.ts). Two copies of the
 * template run its retries on their own Schedule Triggers, every 3 s instead of every minute, so both fire
 * at the same moments and race for the same due events; the claim's and Take Due's lease is 20 s and Retry
 * Later's backoff 1 s doubling to 4 s, so the storm drains in seconds by the real clock (nothing moves
 * lease_until by hand). After it drains: every good event's business row exactly once, none lost, none
 * doubled, nothing stuck, exactly the poison events are dead letters. Printed beside it, today's figure:
 * the events whose only delivery failed or died, which the Release template (no kept event) loses,
 * because the sender never asks again.
 *
 * Where the kills land. Each kill waits until the sender's other deliveries are answered and no retry run
 * is in flight (between schedule ticks), so what dies is the two events' running writes: a delivery cut
 * before its claim committed is lost whatever n8n does (the sender gave up on it). The server drops the
 * statement of a client that is gone (client_connection_check_interval), so the killed writes and their
 * Completes never commit. The sender sends nothing while n8n is down (a delivery it cannot make is not one
 * the inbox can keep).
 */
import type { Pool } from 'pg';

import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { webhookPathOf } from '../../harness/n8n/workflows';
import {
	deliverEachOnce,
	deliverOnce,
	expectDrained,
	fillPlan,
	inboxOutcome,
	STORM,
	stormWorkflows,
	NO_ANSWER,
	plannedEvent,
	printStorm,
	sleepingWrites,
	stormEvents,
	waitUntilDrained,
	type PlannedEvent,
	type SenderAnswer,
} from '../support/inbox';
import { waitFor } from '../support/waitFor';
import { stackOnOwnAppServerForSuite } from '../../harness/stackForSuite';
import { restartInsideWrite, type RestartInsideWrite } from '../support/restartInsideWrite';

const EVENTS = Number(process.env.E2E_INBOX_STORM_EVENTS ?? 300);
const KILLS = 3;
const KILLED_STEPS_PER_KILL = 2;
const IN_FLIGHT = 8;

const { github, retryIds, stack } = stormWorkflows();

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

// The workflows' tables on a server of their own: its restart leaves n8n's own database up.
const suite = stackOnOwnAppServerForSuite(
	{ appDatabase: 'inbox_storm', n8nSchema: 'n8n_inbox_storm', ...stack },
	(started) => ({ pool, n8n, executions } = started),
);

const url = () => n8n!.webhookUrl(webhookPathOf(github));

it(
	`${EVENTS} events sent once each, ~10 % failing once, ${STORM.poisonEvents} poison, n8n killed ${KILLS} times mid-step, ` +
		'Postgres restarted inside a Write and Complete, two scheduled retry copies: ' +
		'every good event once, the poison ones dead letters, nothing stuck',
	() => explainedByN8nLog(n8n, storm),
	20 * 60_000,
);

async function storm(): Promise<void> {
	const started = Date.now();
	const killed = Array.from({ length: KILLS }, () =>
		Array.from({ length: KILLED_STEPS_PER_KILL }, () =>
			plannedEvent(0, { attempt: 1, seconds: 60 }),
		),
	);
	// Its write sleeps a second before its commit, so the restart can land there.
	const restarted = plannedEvent(0, { attempt: 1, seconds: 1 });
	const regular = stormEvents(
		EVENTS - KILLS * KILLED_STEPS_PER_KILL - 1,
		STORM.poisonEvents,
		STORM.seed,
	);
	const events = [...regular, ...killed.flat(), restarted];
	await fillPlan(pool, events);

	// The regular events in KILLS + 1 parts; a kill after each but the last; the restart in the third part.
	const parts = Array.from({ length: KILLS + 1 }, (_, k) =>
		regular.slice(
			Math.floor((k * regular.length) / (KILLS + 1)),
			Math.floor(((k + 1) * regular.length) / (KILLS + 1)),
		),
	);
	const restartPart = Math.min(2, KILLS);
	const middle = Math.floor(parts[restartPart].length / 2);
	parts[restartPart].splice(middle, 0, restarted);

	const answers = new Map<string, SenderAnswer>();
	const kills: Array<{ stepsRunning: number; n8nDownSeconds: number }> = [];
	let restart: RestartInsideWrite | undefined;
	let since = await executions.lastId();
	const firstExecution = since;
	for (const [index, part] of parts.entries()) {
		const restarting =
			index === restartPart
				? restartInsideWrite({
						suite,
						pool,
						key: restarted.key,
						downMs: STORM.restartDownMs,
						timeoutMs: 600_000,
					}).then((done) => (restart = done))
				: undefined;
		await deliverEachOnce(url(), part, IN_FLIGHT, answers);
		await restarting;
		if (index < KILLS) {
			kills.push(await killMidStep(killed[index], answers, since));
			since = await executions.lastId();
		}
	}

	// The two scheduled retry copies drain what is due.
	await waitUntilDrained(
		pool,
		120_000,
		async () => (await executions.unfinished(retryIds, since)) === 0,
	);
	const outcome = await inboxOutcome(pool, events);

	const retryRuns = await printStorm({
		title: 'inbox storm',
		executions,
		retryIds,
		firstExecution,
		events,
		answers,
		outcome,
		startedAt: started,
		figures: { n8nKills: kills, restartInsideWrite: restart ?? null },
	});

	await expectDrained(pool, events, STORM.maxAttempts);
	// The restart came while the write's row and Complete were made and neither was committed.
	expect(restart?.atRestart).toEqual({ businessRows: 0, claimCompleted: false });
	expect(kills.map((kill) => kill.stepsRunning)).toEqual(
		Array.from({ length: KILLS }, () => KILLED_STEPS_PER_KILL),
	);
	for (const event of killed.flat()) expect(answers.get(event.key)).toBe(NO_ANSWER);
	// Every failing event was kept and answered so (202); none was refused or lost on the way in.
	for (const event of regular)
		if (event.failures > 0) expect(answers.get(event.key)).toBe('202 accepted');
	// Both retry copies ran (their schedules fire at the same moments).
	for (const runs of retryRuns) expect(runs.success ?? 0).toBeGreaterThan(0);
}

/**
 * Delivers these events (each write sleeps on its first attempt), waits until every one of them is
 * inside its write and no retry run is in flight, then SIGKILLs n8n and starts it again. The
 * deliveries get no answer; the sender never sends them again.
 */
async function killMidStep(
	group: PlannedEvent[],
	answers: Map<string, SenderAnswer>,
	since: number,
): Promise<{ stepsRunning: number; n8nDownSeconds: number }> {
	const delivered = group.map((event) =>
		deliverOnce(url(), event).then((answer) => answers.set(event.key, answer)),
	);
	await waitFor(
		async () => (await sleepingSteps()) === group.length,
		120_000,
		'the writes to kill n8n under',
	);
	// Between schedule ticks (they fire on multiples of STORM.scheduleEverySeconds), with no retry run in flight.
	await waitFor(
		async () => {
			const phase = Date.now() % (STORM.scheduleEverySeconds * 1000);
			return (
				phase > 600 &&
				phase < STORM.scheduleEverySeconds * 1000 - 800 &&
				(await executions.unfinished(retryIds, since)) === 0
			);
		},
		60_000,
		'a moment with no retry run in flight',
	);
	const stepsRunning = await sleepingSteps();
	const down = Date.now();
	await n8n!.kill();
	await Promise.all(delivered);
	await n8n!.start();
	return { stepsRunning, n8nDownSeconds: Math.round((Date.now() - down) / 100) / 10 };
}

async function sleepingSteps(): Promise<number> {
	return (await sleepingWrites(pool)).length;
}
