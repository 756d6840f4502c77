/**
 * workflows/rate-limited-retries-template.json in real n8n: a burst of events arrives at once, more than
 * the downstream's rate allows; the webhook path runs what Check Rate allows and keeps the rest (202),
 * and the template's own retry schedule drains them through the same Check Rate. Read from Postgres: the
 * times the business writes ran (the database's clock_timestamp()), never more than R in any window of W
 * seconds (the downstream's); each event's row once; nothing left kept, parked or processing. The
 * workflow is test/e2e/fixtures/rateLimitedRetriesWorkflow.ts: the shipped template with R = 5, Check
 * Rate's window W + a margin (as the template's 60 s + 5 s), and its retry schedule every second.
 *
 * Why the margin: Check Rate counts starts; a write comes a moment after its start (here up to a few
 * hundred ms on a loaded machine), so with Check Rate's window at exactly W a downstream's W can see more
 * than R (a first run of this suite saw 7 of R = 5). A write made within the margin of its start keeps
 * every window of W at R or fewer; the test checks that the writes did come within it.
 */
import type { Pool } from 'pg';

import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { deliver, type Delivery } from '../../harness/webhooks/deliver';
import { stackForSuite } from '../../harness/stackForSuite';
import { waitFor } from '../support/waitFor';
import { rateLimitedRetriesWorkflow } from './fixtures/rateLimitedRetriesWorkflow';

const EVENTS = 40;
const MAX_STARTS = 5;
/** The downstream's window, and the margin Check Rate's window adds to it. */
const WINDOW_SECONDS = 4;
const MARGIN_SECONDS = 2;

const { workflow, keyPrefix } = rateLimitedRetriesWorkflow({
	path: 'rate-limited-retries-e2e',
	maxStarts: MAX_STARTS,
	windowSeconds: WINDOW_SECONDS + MARGIN_SECONDS,
});

let db: Pool;
let n8n: N8nInstance | undefined;

stackForSuite(
	{
		appDatabase: 'idem_rate_retries',
		n8nSchema: 'n8n_rate_retries',
		workflows: [workflow],
		publish: [workflow.id],
	},
	(started) => ({ pool: db, n8n } = started),
);

/**
 * The most business writes among these keys in any window of `seconds`: for each write, those that ran in
 * [its time, its time + seconds). `column` is when each ran (created_at) or when Check Rate counted its
 * start (event_type, where the test's write put idempotency.rate.startedAt).
 */
async function mostInAnyWindow(keys: string[], column: string, seconds: number): Promise<number> {
	const { rows } = await db.query<{ most: number }>(
		`WITH runs AS (SELECT ${column}::timestamptz AS at FROM business_log WHERE event_key = ANY($1))
		SELECT coalesce(max(n), 0)::int AS most FROM runs r,
			LATERAL (SELECT count(*) AS n FROM runs s
				WHERE s.at >= r.at AND s.at < r.at + make_interval(secs => $2)) c`,
		[keys, seconds],
	);
	return rows[0].most;
}

it(
	`a burst of ${EVENTS} events at once, R = ${MAX_STARTS} per ${WINDOW_SECONDS} s (+ ${MARGIN_SECONDS} s margin): the limited ones are kept (202) and drained by the retry schedule, never more than R business writes in any ${WINDOW_SECONDS} s, each event once`,
	() =>
		explainedByN8nLog(n8n, async () => {
			const started = Date.now();
			const ids = Array.from({ length: EVENTS }, (_, i) => `evt_rate_${i}`);
			const keys = ids.map((id) => `${keyPrefix}${id}`);
			const url = n8n!.webhookUrl(webhookPathOf(workflow));
			const answers: Delivery[] = await Promise.all(
				ids.map((id) => deliver(url, JSON.stringify({ id, type: 'order.paid' }), {}, 60_000)),
			);
			const told = answers.map((answer) => `${answer.status} ${answer.body.status}`);
			const processedAtOnce = told.filter((answer) => answer === '200 processed').length;
			const kept = told.filter((answer) => answer === '202 accepted').length;
			// Each event is told processed, or kept for the window; nothing else (no 5xx, no loss).
			expect({ told: told.length, processedAtOnce, kept }).toEqual({
				told: EVENTS,
				processedAtOnce: EVENTS - kept,
				kept: expect.any(Number),
			});
			expect(answers.map((answer) => answer.body.key).sort()).toEqual([...keys].sort());
			// The limiter was used: more arrived than the window lets through.
			expect(processedAtOnce).toBeLessThan(EVENTS);
			expect(kept).toBeGreaterThanOrEqual(EVENTS - 2 * MAX_STARTS);

			await waitFor(
				async () => Object.keys(await businessRowsPerKey(db, keys)).length === EVENTS,
				90_000,
				'every event written',
			);
			const drainedMs = Date.now() - started;
			// Written once each, and nothing left: no claim processing, no kept event, no dead letter.
			expect(await businessRowsPerKey(db, keys)).toEqual(
				Object.fromEntries(keys.map((key) => [key, 1])),
			);
			// A claim is completed once its lease is cleared (processing: set; a dead letter: infinity).
			const { rows: claims } = await db.query(
				'SELECT lease_until IS NULL AS completed, count(*)::int AS n FROM processed_events WHERE key = ANY($1) GROUP BY 1',
				[keys],
			);
			expect(claims).toEqual([{ completed: true, n: EVENTS }]);
			const { rows: left } = await db.query('SELECT key FROM processed_events_events');
			expect(left).toEqual([]);

			const mostWritten = await mostInAnyWindow(keys, 'created_at', WINDOW_SECONDS);
			const mostStarted = await mostInAnyWindow(
				keys,
				'event_type',
				WINDOW_SECONDS + MARGIN_SECONDS,
			);
			const { rows: lag } = await db.query<{ ms: number }>(
				'SELECT round(max(extract(epoch FROM created_at - event_type::timestamptz)) * 1000)::int AS ms FROM business_log WHERE event_key = ANY($1)',
				[keys],
			);
			console.log(
				`rate-limited retries: ${JSON.stringify({ events: EVENTS, maxStarts: MAX_STARTS, windowSeconds: WINDOW_SECONDS, marginSeconds: MARGIN_SECONDS, processedAtOnce, kept, mostWritten, mostStarted, longestStartToWriteMs: lag[0].ms, drainedMs })}`,
			);
			// Check Rate's starts never more than R in its window; each write within the margin of its start;
			// so the writes themselves never more than R in any window of the downstream's W.
			expect(mostStarted).toBeLessThanOrEqual(MAX_STARTS);
			expect(lag[0].ms).toBeLessThan(MARGIN_SECONDS * 1000);
			expect(mostWritten).toBeLessThanOrEqual(MAX_STARTS);
			// And R was used: some window of W held R writes.
			expect(mostWritten).toBe(MAX_STARTS);
		}),
	3 * 60_000,
);
