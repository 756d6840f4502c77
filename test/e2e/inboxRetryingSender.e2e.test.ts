/**
 * The inbox in real n8n 2.x with a sender that also retries (Stripe's way): the shipped Stripe template
 * (Keep Event, Write and Complete, Retry Later, answered 500 so the sender keeps retrying), every delivery
 * signed by the `stripe` package's own test-header helper with a new timestamp, some events sent twice at
 * once, and every answer that is not 2xx retried after a short backoff. The business write (the template's
 * own Write and Complete) fails once or twice for some events and always for a few poison ones (a trigger
 * on business_log, planned by the event's attempt count). While the sender retries, the template's retry
 * path (Run Now → Take Due Events, in a copy of the template: the retry workflow below) runs, two runs at
 * once, again and again, then until nothing is due: the sender's retries and the retry workflow race for the
 * same due events. Retry Later's backoff is seconds here (the templates ship 30 s), so they meet often. The
 * retry workflow joins once the sender's own retry has run a failed event, and a few events are sent only once
 * (GitHub's way), so each source is shown to run failed events.
 *
 * In the end every good event's business write committed exactly once (one business row, one "processed" answer at
 * most), no event is lost or left processing, and exactly the poison events are dead letters.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import Stripe from 'stripe';

import { TEMPLATE_SIGNING_SECRET } from '../../harness/n8n/credentials';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { N8nManualRuns } from '../../harness/n8n/manualRuns';
import { ownerEnv } from '../../harness/n8n/owner';
import { ensureRuntime } from '../../harness/n8n/runtime';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import {
	inboxWorkflows,
	KEPT_ATTEMPTS_SQL,
	keyPrefixOf,
	makeDue,
	POISON,
	processingLeft,
} from '../support/inbox';
import { stackForSuite } from '../../harness/stackForSuite';

const GOOD_EVENTS = 60;
/** Good events that fail once and that this sender, like GitHub, sends once: only the retry workflow can run them. */
const SENT_ONCE_EVENTS = 3;
const POISON_EVENTS = 3;
const MAX_ATTEMPTS = 3;
/** Seconds: an event that failed is due again after 2 s, then 4 s (less up to a fifth). */
const BACKOFF = { baseSeconds: 2, factor: 2, capSeconds: 8, jitter: 0.2 };
const SENDER_SECONDS = 150;
/** How long the retry workflow waits for the sender's own retries to run a failed event first. */
const SENDER_FIRST_MS = 60_000;
const RUN_NOW = 'Run Now';

const stripe = new Stripe('sk_test_inbox_not_a_real_key');
const {
	template: stripeTemplate,
	retryDue: [retryDue],
} = inboxWorkflows({
	template: 'stripe-template.json',
	maxAttempts: MAX_ATTEMPTS,
	backoff: BACKOFF,
});

/** Planned failures by the attempt the event is on (the inbox's own count): attempt ≤ failures raises. */
const PLAN_SQL = `${KEPT_ATTEMPTS_SQL}
	CREATE TABLE inbox_plan (event_key text PRIMARY KEY, failures integer NOT NULL);
	CREATE FUNCTION inbox_planned_failure() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE planned integer; attempt integer;
	BEGIN
		SELECT failures INTO planned FROM inbox_plan WHERE event_key = NEW.event_key;
		IF FOUND THEN
			SELECT attempts INTO attempt FROM inbox_attempts WHERE event_key = NEW.event_key;
			IF attempt <= planned THEN
				RAISE EXCEPTION 'planned business failure (attempt %) of %', attempt, NEW.event_key;
			END IF;
		END IF;
		-- A real business write takes a moment, so a copy sent at the same time finds it running.
		PERFORM pg_sleep(0.05);
		RETURN NEW;
	END $$;
	CREATE TRIGGER inbox_planned_failure BEFORE INSERT ON business_log
		FOR EACH ROW EXECUTE FUNCTION inbox_planned_failure();`;

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

stackForSuite(
	async () => ({
		appDatabase: 'inbox_sender_e2e',
		n8nSchema: 'n8n_inbox_sender',
		workflows: [stripeTemplate, retryDue],
		// Published as a user would: its schedule is one more taker the test races against.
		publish: [stripeTemplate.id, retryDue.id],
		appSql: PLAN_SQL,
		env: ownerEnv(await ensureRuntime()),
	}),
	(started) => ({ pool, n8n, executions } = started),
);

interface PlannedEvent {
	key: string;
	body: string;
	failures: number;
}

const STRIPE_KEY_PREFIX = keyPrefixOf('stripe-template.json');

const planned = (failures: number): PlannedEvent => {
	const id = `evt_${randomBytes(8).toString('hex')}`;
	const body = JSON.stringify({
		id,
		object: 'event',
		type: 'invoice.paid',
		data: { object: { amount: 1200 } },
	});
	return { key: `${STRIPE_KEY_PREFIX}${id}`, body, failures };
};

it(
	'a sender that retries and the retry workflow race for failed events: every good event runs once, the poison ones are dead letters',
	() =>
		explainedByN8nLog(n8n, async () => {
			const events = [
				...Array.from({ length: GOOD_EVENTS }, (_, i) =>
					planned(i % 10 === 0 ? 1 : i % 20 === 5 ? 2 : 0),
				),
				...Array.from({ length: POISON_EVENTS }, () => planned(POISON)),
			];
			const sentOnce = Array.from({ length: SENT_ONCE_EVENTS }, () => planned(1));
			events.push(...sentOnce);
			await pool.query(
				'INSERT INTO inbox_plan (event_key, failures) SELECT * FROM unnest($1::text[], $2::int[])',
				[events.map((e) => e.key), events.map((e) => e.failures)],
			);
			const good = events.filter((e) => e.failures < POISON);
			const poison = events.filter((e) => e.failures >= POISON);

			const processed = new Map<string, number[]>();
			let senderRetryRan: () => void = () => undefined;
			const firstRunBySenderRetry = new Promise<void>((resolve) => (senderRetryRan = resolve));
			const onAnswer = ({ event, attempt, status, body }: ProviderAnswer) => {
				if (status !== 200 || body.status !== 'processed') return;
				processed.set(event.key, [...(processed.get(event.key) ?? []), attempt]);
				if (attempt > 1) senderRetryRan();
			};
			const runs = await N8nManualRuns.signIn(n8n!.baseUrl);
			const retryRuns = { rounds: 0, executions: 0 };
			const retryRound = async () => {
				const since = await executions.lastId();
				await Promise.all([runs.run(retryDue.id, RUN_NOW), runs.run(retryDue.id, RUN_NOW)]);
				await executions.waitForFinished(retryDue.id, since, 2, 120_000);
				retryRuns.rounds++;
				retryRuns.executions += 2;
			};

			// The sender: each event once or twice at once, 6 in flight, non-2xx retried after 0.2–1 s (×1.5 each
			// time, at most 5 s), each delivery signed afresh by Stripe's own helper.
			let sending = true;
			const sender = runRetryingProvider({
				url: n8n!.webhookUrl(webhookPathOf(stripeTemplate)),
				bursts: events.map((event, i) => ({
					event,
					copies: i % 4 === 0 ? 2 : 1,
					maxAttempts: sentOnce.includes(event) ? 1 : undefined,
				})),
				concurrency: 6,
				retryDelayMs: { min: 200, max: 1_000 },
				maxAttempts: 14,
				deadlineMs: SENDER_SECONDS * 1000,
				sign: (event) => ({
					'stripe-signature': stripe.webhooks.generateTestHeaderString({
						payload: event.body,
						secret: TEMPLATE_SIGNING_SECRET,
					}),
				}),
				onAnswer,
			}).finally(() => (sending = false));
			// Meanwhile the retry workflow, two runs at once, round after round. Its rounds take well under a
			// second, so it would win every race: it starts once the sender's own retry has run a failed event.
			const retrying = (async () => {
				await Promise.race([
					firstRunBySenderRetry,
					sleep(SENDER_FIRST_MS, undefined, { ref: false }),
				]);
				while (sending) await retryRound();
			})();
			const report = await sender;
			await retrying;

			// The sender is done (it gave up on the poison events only): the retry workflow until nothing is due.
			let drainRounds = 0;
			for (; drainRounds < 20 && (await processingLeft(pool)) > 0; drainRounds++) {
				await makeDue(pool);
				await retryRound();
			}

			const byRetryWorkflow = good.filter((e) => !processed.has(e.key)).length;
			const bySenderRetry = [...processed.values()].filter((attempts) => attempts[0] > 1).length;
			console.log(
				`inbox with a retrying sender: ${JSON.stringify({
					events: events.length,
					requests: report.requests,
					retries: report.retries,
					retriesByStatus: report.retriesByStatus,
					answers: report.answers,
					undelivered: report.undelivered.length,
					seconds: report.seconds,
					retryWorkflowRounds: retryRuns.rounds,
					retryWorkflowExecutions: retryRuns.executions,
					drainRounds,
					goodEventsRunBySenderRetry: bySenderRetry,
					goodEventsRunByRetryWorkflow: byRetryWorkflow,
				})}`,
			);

			// Every good event's business write committed exactly once; a poison event's never did.
			expect(
				await businessRowsPerKey(
					pool,
					good.map((e) => e.key),
				),
			).toEqual(Object.fromEntries(good.map((e) => [e.key, 1])));
			expect(
				await businessRowsPerKey(
					pool,
					poison.map((e) => e.key),
				),
			).toEqual({});
			// No good event was answered "processed" twice (two runs would be).
			expect([...processed.entries()].filter(([, attempts]) => attempts.length > 1)).toEqual([]);
			// Only the poison events' and the sent-once events' deliveries went unanswered with a 2xx; the poison
			// ones are parked, nothing else is kept.
			expect([...new Set(report.undelivered.map((u) => u.key))].sort()).toEqual(
				[...poison, ...sentOnce].map((e) => e.key).sort(),
			);
			const { rows: kept } = await pool.query(
				'SELECT key, dead_at IS NOT NULL AS dead, attempts FROM processed_events_events ORDER BY key',
			);
			expect(kept).toEqual(
				poison
					.map((e) => ({ key: e.key, dead: true, attempts: MAX_ATTEMPTS }))
					.sort((a, b) => a.key.localeCompare(b.key)),
			);
			expect(await processingLeft(pool)).toBe(0);
			const { rows: claims } = await pool.query(
				'SELECT count(*)::int AS n FROM processed_events WHERE lease_until IS NULL',
			);
			expect(claims).toEqual([{ n: good.length }]);
			// Both retry sources ran failed events: the race was real.
			expect({ bySenderRetry: bySenderRetry > 0, byRetryWorkflow: byRetryWorkflow > 0 }).toEqual({
				bySenderRetry: true,
				byRetryWorkflow: true,
			});
		}),
	10 * 60_000,
);
