/**
 * The retry storm of test/node/retryStorm.test.ts, through a real n8n 2.x and the shipped node template
 * (Complete With Write: each event's business insert and its claim's Complete in one transaction): N events
 * (E2E_STORM_EVENTS, default 200), each delivered 1–5 times at once, bursts in random order with 8 in
 * flight; about 10 % of write attempts fail for real (a trigger on the test's business_log, planned by
 * seed); every connection of the workflows' database user is killed once mid-run, while a business insert
 * runs (E2E_STORM_OUTAGE=server: the test's own connections too); and two faults are aimed inside one
 * event's write transaction each (harness/faults/heldWrite.ts holds it there until the fault lands): the
 * workflows' Postgres server is restarted (fast shutdown, seconds down) while one event's transaction holds
 * its claim row and its uncommitted business row, and another event's server process is killed inside its
 * COMMIT. Every delivery not answered 2xx is retried as a provider would. In the end each event has exactly
 * one business row and a completed claim, and the sender was told `processed` once per event. The
 * workflows' tables live on a server of their own, so the restart does not take n8n's own database down.
 *
 * The template is imported as shipped but for Retry Later's backoff: a failed event is kept and due again
 * after 1 s (then 2 s, at most 4 s) instead of 30 s, so the provider's retries, which come within seconds
 * here, run it again within the storm instead of being told 409 for half a minute. Only its database
 * differs otherwise. Replay a run with the seed it prints: E2E_STORM_SEED=… npm run test:e2e -- retryStorm
 */
import type { Pool } from 'pg';

import { businessRowsPerKey, type AppDatabase } from '../../harness/postgres/appDatabase';
import { claimsByStatus, rowsOf } from '../support/claimTableSql';
import { InjectedFailures } from '../support/injectedFailures';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { HOLD_WRITES_SQL, WriteHold, type HeldWrite } from '../../harness/faults/heldWrite';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { planStorm } from '../support/stormPlan';
import { stackOnOwnAppServerForSuite } from '../../harness/stackForSuite';
import {
	terminateConnectionsOf,
	type TerminatedConnections,
} from '../support/terminateConnections';
import { loadShippedWorkflow, webhookPathOf } from '../../harness/n8n/workflows';

const EVENTS = Number(process.env.E2E_STORM_EVENTS ?? 200);
const SEED = Number(process.env.E2E_STORM_SEED ?? 20261130);
const BURSTS_IN_FLIGHT = 8;
/** Share of events that fail; a quarter of them twice, so about 10 % of business-step attempts fail. */
const FAILING_EVENTS = 0.1;
/**
 * Seconds the provider keeps retrying (a real one retries for hours): 0.2–0.35 s per event was measured on
 * a quiet 2-core machine, and 1.06 s when CI's other lane ran the benchmarks' n8n throughput beside it
 * (the storm then ended with 8 events still answered 409 at a 210 s deadline), and 3.8–4.6 s on a
 * 2-core machine running four e2e suites at once (load 20–30: n8n's own database connections timed out,
 * and n8n answered 500 and 503 itself). The rest is slack; the assertions are on what ran, not on how
 * fast: a storm that goes well ends long before its deadline.
 */
const STORM_SECONDS = 90 + Math.ceil(EVENTS * 5);
const N8N_SCHEMA = 'n8n_storm';
/** How long the workflows' server is down: a fast shutdown and start take seconds, as a restart does. */
const RESTART_DOWN_MS = 5_000;
/** The template's example business step, as pg_stat_activity shows it. */
const BUSINESS_SQL = 'INSERT INTO business_log %';
/**
 * Whose connections the mid-run outage kills: "app" (default) the workflows' database user only, as when the
 * business database fails over while n8n's own database lives elsewhere; "server" also n8n's own (and this
 * test's idle) connections, as when the one shared server restarts.
 */
const OUTAGE = process.env.E2E_STORM_OUTAGE === 'server' ? 'server' : 'app';

const RETRY_BACKOFF = { baseSeconds: 1, factor: 2, capSeconds: 4, jitter: 0.2 };
const shipped = loadShippedWorkflow('idempotency-claim-template.json');
const template = {
	...shipped,
	nodes: shipped.nodes.map((node) =>
		node.name === 'Retry Later'
			? { ...node, parameters: { ...node.parameters, backoff: RETRY_BACKOFF } }
			: node,
	),
};

let app: AppDatabase;
let admin: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

// The test's own connection is the admin's: killing the app role's connections leaves it alone (a
// server-wide outage also kills its idle ones; the pool replaces them).
const suite = stackOnOwnAppServerForSuite(
	{
		appDatabase: 'idem_storm',
		n8nSchema: N8N_SCHEMA,
		workflows: [template],
		publish: [template.id],
		appSql: `${InjectedFailures.installSql}\n${HOLD_WRITES_SQL}`,
	},
	(started) => ({ app, pool: admin, n8n, executions } = started),
);

it(
	`retry storm: ${EVENTS} events, 1–5 concurrent deliveries each, ~10 % failing business steps, ${OUTAGE === 'app' ? 'app' : 'all'} connections killed mid-run → exactly ${EVENTS} business rows`,
	() => explainedByN8nLog(n8n, storm),
	(STORM_SECONDS + 120) * 1000,
);

function outageUsers(): string[] {
	if (OUTAGE === 'app') return [app.role];
	return [app.role, decodeURIComponent(new URL(app.adminUrl).username)];
}

async function storm(): Promise<void> {
	const plan = planStorm({
		events: EVENTS,
		seed: SEED,
		failureRate: FAILING_EVENTS,
		maxCopies: 5,
		tag: app.name,
	});
	const failures = new InjectedFailures(admin);
	await failures.fill(plan.events);
	// The faults are aimed at events planned to succeed, early enough in the run that a slow machine gets to
	// them well before the storm's end: the kill inside a COMMIT in its second tenth, the restart in its third.
	const succeeding = (from: number, to: number) =>
		plan.bursts
			.slice(Math.floor(plan.bursts.length * from), Math.floor(plan.bursts.length * to))
			.find((burst) => burst.event.failures === 0)!.event.key;
	const commitKillKey = succeeding(0.1, 0.2);
	const restartKey = succeeding(0.2, 0.3);
	const holderUrl = app.adminUrl;
	const restartHold = await WriteHold.install({ holderUrl, key: restartKey, at: 'write' });
	const commitHold = await WriteHold.install({ holderUrl, key: commitKillKey, at: 'commit' });
	let restarted: HeldWrite<{ downMs: number }> | undefined;
	let commitKilled: HeldWrite<{ terminated: boolean }> | undefined;
	const aimed = Promise.all([
		restartHold
			.whenReached(STORM_SECONDS * 1000, async () => {
				await suite.appServer().restart(RESTART_DOWN_MS);
				return { downMs: RESTART_DOWN_MS };
			})
			.then((done) => (restarted = done)),
		commitHold
			.whenReached(STORM_SECONDS * 1000, async ({ pid }) => {
				const { rows } = await admin.query<{ terminated: boolean }>(
					'SELECT pg_terminate_backend($1) AS terminated',
					[pid],
				);
				return rows[0];
			})
			.then((done) => (commitKilled = done)),
	]);
	const since = await executions.lastId();

	const killAt = Math.ceil(plan.deliveries / 2);
	let killed: TerminatedConnections | undefined;
	const failedAnswers = { total: 0, planned: 0 };
	const processedAnswers = new Map<string, number>();
	/** Events answered a 5xx at least once: the template's own schedule may then run them first. */
	const answered5xx = new Set<string>();
	const onAnswer = async ({ event, status, body }: ProviderAnswer) => {
		if (status >= 500) answered5xx.add(event.key);
		if (status === 200 && body.status === 'processed')
			processedAnswers.set(event.key, (processedAnswers.get(event.key) ?? 0) + 1);
		if (status === 500 && body.status === 'failed') {
			// The template kept the event for a retry and answered 500: count one failure of this event as done.
			failedAnswers.total++;
			if (await failures.drainOne(event.key)) failedAnswers.planned++;
		}
	};

	const report = await runRetryingProvider({
		url: n8n!.webhookUrl(webhookPathOf(template)),
		bursts: plan.bursts,
		concurrency: BURSTS_IN_FLIGHT,
		retryDelayMs: { min: 200, max: 1_000 },
		maxAttempts: 30,
		deadlineMs: STORM_SECONDS * 1000,
		beforeRequest: async (requestNumber) => {
			// The outage lands while a business step runs, so it can cut one (→ error output → Retry Later → 500).
			if (requestNumber === killAt)
				killed = await terminateConnectionsOf(admin, outageUsers(), { whileRunning: BUSINESS_SQL });
		},
		onAnswer,
	});
	// Read after the storm's report, so a fault that never landed is reported with it.
	const aimedFailure = await aimed.then(
		() => null,
		(error: unknown) => String(error),
	);

	const business = await admin.query<{ total: number; distinct_keys: number }>(
		'SELECT count(*)::int AS total, count(DISTINCT event_key)::int AS distinct_keys FROM business_log',
	);
	const doubled = await admin.query(
		'SELECT event_key, count(*)::int AS n FROM business_log GROUP BY event_key HAVING count(*) > 1 LIMIT 10',
	);
	const missing = await admin.query(
		'SELECT k AS event_key FROM unnest($1::text[]) AS k WHERE NOT EXISTS (SELECT 1 FROM business_log b WHERE b.event_key = k) LIMIT 10',
		[plan.events.map((event) => event.key)],
	);
	const claims = { rows: await claimsByStatus(admin, 'processed_events') };
	const notCompleted = {
		rows: (await rowsOf(admin, 'processed_events'))
			.filter((row) => row.status !== 'completed')
			.slice(0, 10)
			.map(({ key, status, deliveries, lease_until }) => ({
				key,
				status,
				deliveries,
				lease_until,
			})),
	};
	const plannedFailuresLeft = await failures.remaining();
	const runs = await executions.settledStatusCounts(template.id, since, 20_000);
	const failedRuns = await executions.failures(template.id, since);

	console.log(
		`retry storm through n8n (seed ${SEED}, outage: ${OUTAGE}): ${JSON.stringify(
			{
				events: EVENTS,
				deliveries: plan.deliveries,
				requests: report.requests,
				retries: report.retries,
				retriesByStatus: report.retriesByStatus,
				answers: report.answers,
				maxAttemptsPerDelivery: report.maxAttemptsUsed,
				plannedBusinessFailures: plan.plannedFailures,
				failedAnswers: { ...failedAnswers, unplanned: failedAnswers.total - failedAnswers.planned },
				killedConnections: killed ?? null,
				killedBeforeRequest: killAt,
				aimedFailure,
				aimedRows: await businessRowsPerKey(admin, [restartKey, commitKillKey]),
				restartedInWrite: restarted ?? null,
				killedInCommit: commitKilled ?? null,
				seconds: report.seconds,
				requestsPerSecond: Math.round((report.requests / report.seconds) * 10) / 10,
				n8nExecutions: runs,
				failedExecutions: failedRuns,
				businessRows: business.rows[0],
				claims: claims.rows,
			},
			null,
			1,
		)}`,
	);

	expect(aimedFailure).toBeNull();
	expect(report.undelivered).toEqual([]);
	expect(killed?.total).toBeGreaterThan(0);
	// The restart cut one event's write transaction after its insert, the kill another's COMMIT; both still
	// end with one business row and a completed claim (checked with every other event below).
	expect(restarted?.key).toBe(restartKey);
	expect(commitKilled?.fault).toEqual({ terminated: true });
	// Every planned failure went through the error path (Retry Later → 500) and was retried.
	expect(plannedFailuresLeft).toBe(0);
	expect(failedAnswers.planned).toBe(plan.plannedFailures);
	expect({ doubled: doubled.rows, missing: missing.rows }).toEqual({ doubled: [], missing: [] });
	expect(business.rows[0]).toEqual({ total: EVENTS, distinct_keys: EVENTS });
	expect(notCompleted.rows).toEqual([]);
	expect(claims.rows).toEqual([{ status: 'completed', n: EVENTS }]);
	// The provider saw each event processed at most once; every other 2xx was a duplicate. An event never
	// told `processed` was answered a 5xx first, and the template's own retry schedule ran it before the
	// sender's retry came (which was then told duplicate).
	expect([...processedAnswers.values()].filter((n) => n !== 1)).toEqual([]);
	const neverToldProcessed = plan.events
		.map((event) => event.key)
		.filter((key) => !processedAnswers.has(key));
	expect(neverToldProcessed.filter((key) => !answered5xx.has(key))).toEqual([]);
}
