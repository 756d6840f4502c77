/**
 * The inbox in real n8n 2.x, with a sender that never retries (GitHub's way): each event is delivered once,
 * signed, through the shipped GitHub template (Keep Event, Write and Complete, Retry Later); the business
 * write fails once or twice for some events and always for a few poison ones (a trigger on business_log,
 * planned by the event's attempt count); n8n is killed with SIGKILL while one event's write runs; then the
 * template's retry path (Run Now → Take Due Events → Write and Complete, in a copy of the template) is run,
 * two runs at once each round, until nothing is due. Time is moved by moving the claims' lease_until (the
 * one clock the inbox reads), so backoffs and the dead execution's lease pass at once. In the end every
 * good event's business row is there exactly once, the poison events are dead letters, and nothing else is
 * left processing. Beside it, today's figure: the events whose only delivery failed, which the Release
 * template loses (the sender never asks again).
 */
import type { Pool } from 'pg';

import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { N8nManualRuns } from '../../harness/n8n/manualRuns';
import { ownerEnv } from '../../harness/n8n/owner';
import { ensureRuntime } from '../../harness/n8n/runtime';
import { webhookPathOf } from '../../harness/n8n/workflows';
import {
	deliverEachOnce,
	deliverOnce,
	expectDrained,
	fillPlan,
	INBOX_PLAN_SQL,
	inboxWorkflows,
	isPoison,
	lostWithoutKeptEvents,
	makeDue,
	NO_ANSWER,
	plannedEvent,
	POISON,
	processingLeft,
} from '../support/inbox';
import { waitFor } from '../support/waitFor';
import { stackForSuite } from '../../harness/stackForSuite';

const GOOD_EVENTS = 40;
const POISON_EVENTS = 3;
const MAX_ATTEMPTS = 3;
const RUN_NOW = 'Run Now';

const {
	template: github,
	retryDue: [retryDue],
} = inboxWorkflows({ maxAttempts: MAX_ATTEMPTS });

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;
let runs: N8nManualRuns;

stackForSuite(
	async () => ({
		appDatabase: 'inbox_e2e',
		n8nSchema: 'n8n_inbox',
		workflows: [github, retryDue],
		// The retry copy is published as a user would; its schedule fires at most once a minute and takes
		// only what is due, so it is one more taker the test races against.
		publish: [github.id, retryDue.id],
		appSql: INBOX_PLAN_SQL,
		env: ownerEnv(await ensureRuntime()),
	}),
	(started) => ({ pool, n8n, executions } = started),
);

beforeAll(async () => {
	runs = await N8nManualRuns.signIn(n8n!.baseUrl);
});

const url = () => n8n!.webhookUrl(webhookPathOf(github));

it(
	'a sender that never retries: every good event runs once, the poison ones are dead letters, nothing is stuck',
	() =>
		explainedByN8nLog(n8n, async () => {
			const events = [
				...Array.from({ length: GOOD_EVENTS }, (_, i) =>
					plannedEvent(i % 10 === 0 ? 1 : i % 10 === 5 ? 2 : 0),
				),
				...Array.from({ length: POISON_EVENTS }, () => plannedEvent(POISON)),
			];
			const slow = plannedEvent(0, { attempt: 1, seconds: 60 });
			await fillPlan(pool, [...events, slow]);

			// One delivery each, 8 in flight: GitHub's way.
			const answers = new Map<string, string>();
			await deliverEachOnce(url(), events, 8, answers);
			for (const event of events)
				expect({ key: event.key, answer: answers.get(event.key) }).toEqual({
					key: event.key,
					answer: event.failures > 0 ? '202 accepted' : '200 processed',
				});

			// n8n dies under a running write: the delivery gets no answer and is never sent again.
			const lost = deliverOnce(url(), slow);
			await waitFor(async () => {
				const { rows } = await pool.query(
					"SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'INSERT INTO business_log%'",
				);
				return rows.length > 0;
			}, 30_000);
			await n8n!.kill();
			answers.set(slow.key, await lost);
			expect(answers.get(slow.key)).toBe(NO_ANSWER);
			await n8n!.start();
			runs = await N8nManualRuns.signIn(n8n!.baseUrl);

			// The template's retry path, two runs at once, until nothing is due.
			let rounds = 0;
			for (; rounds < 10 && (await processingLeft(pool)) > 0; rounds++) {
				await makeDue(pool);
				const since = await executions.lastId();
				await Promise.all([runs.run(retryDue.id, RUN_NOW), runs.run(retryDue.id, RUN_NOW)]);
				await executions.waitForFinished(retryDue.id, since, 2, 120_000);
			}

			const outcome = await expectDrained(pool, [...events, slow], MAX_ATTEMPTS);
			const release = lostWithoutKeptEvents(answers);
			console.log(
				`inbox e2e: ${outcome.good} good events each run once, ${outcome.deadLetters.length} dead letters ` +
					`(${events.filter(isPoison).length} poison), 0 stuck, ${rounds} retry rounds; without kept events ` +
					`(the Release template) the ${release.lost} events whose only delivery failed or died would be lost: ` +
					`${JSON.stringify(release.byAnswer)}; the sender never asks again`,
			);
		}),
	10 * 60_000,
);
