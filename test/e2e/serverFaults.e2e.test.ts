/**
 * The node template in real n8n 2.x while the server that holds the claims and the business table fails:
 * its disk fills (data and WAL on a small filesystem, filled to the last byte, freed a few seconds later;
 * a server that stopped because it could not write its WAL is then started again, as systemd would), and it comes back as a standby (read-only, promoted a few seconds later). Each during a storm of retried
 * deliveries, with n8n's own data on another server and then on this same one. The sender only ever gets
 * answers that make it retry (5xx, or 409 while another delivery runs) until the event is processed; the
 * template's 503 names the fault and the host (when n8n's data lives on the same server, n8n cannot record
 * the execution and answers 500 itself); after recovery every event has run its business step exactly once
 * and its claim is completed. The one exception, allowed here only when n8n's own data is on the failing
 * server: n8n may fail to save the business sub-workflow's execution after its write committed and report
 * the step failed, so that event runs twice (seen with the full disk). Needs root (the small filesystem is
 * a tmpfs).
 */
import type { Pool } from 'pg';

import { claimsByStatus } from '../support/claimTableSql';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { OwnPostgres } from '../../harness/postgres/server';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { planStorm } from '../support/stormPlan';
import { stackForSuite } from '../../harness/stackForSuite';
import {
	loadShippedWorkflow,
	webhookPathOf,
	withNodeParameters,
} from '../../harness/n8n/workflows';

const EVENTS = 40;
const FAULT_MS = 4_000;
/**
 * The template with a 20 s lease instead of 300 s: when n8n's own data is on the failing server, an
 * execution whose claim committed can die before it records anything, and its claim is held until the
 * lease ends (then a retry takes it over). The storm's deadline must outlast that lease.
 */
const template = withNodeParameters(
	loadShippedWorkflow('idempotency-claim-template.json'),
	'.idempotencyClaim',
	{ leaseSeconds: 20 },
);
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

interface Suite {
	server?: OwnPostgres;
	admin?: Pool;
	n8n?: N8nInstance;
	executions?: N8nExecutions;
}

/** The two faults against one stack; `sameServer`: n8n's own data on the failing server too. */
function faultSuite(sameServer: boolean): void {
	const suite: Suite = {};
	stackForSuite(
		async () => {
			suite.server = await OwnPostgres.start({ diskMiB: 256 });
			const n8nHome = sameServer
				? { postgresUrl: suite.server.url }
				: { appServerUrl: suite.server.url };
			return {
				...n8nHome,
				appDatabase: 'idem_faults',
				n8nSchema: 'n8n_faults',
				workflows: [template],
				publish: [template.id],
			};
		},
		(started) => {
			({ pool: suite.admin, n8n: suite.n8n, executions: suite.executions } = started);
			suite.admin.on('error', () => undefined); // the standby restart ends the test's connections too
		},
	);
	afterAll(() => suite.server?.stop(), 60_000);
	// With n8n's data on the same server, n8n cannot record the execution: it answers 500 itself.
	const nodeAnswer = sameServer ? undefined : /^503 PostgreSQL at 127\.0\.0\.1:\d+ /;

	it(
		'the disk fills mid-storm and is freed: answers that make the sender retry, then every event once',
		() =>
			explainedByN8nLog(suite.n8n, () =>
				stormThrough(
					suite,
					'disk',
					nodeAnswer && new RegExp(`${nodeAnswer.source}is out of disk space \\(could not `),
					// With n8n's own data on the full disk, n8n can fail to save the business sub-workflow's
					// execution after its write committed and report the step failed: the template schedules the
					// event again and its step runs a second time (docs/deploying.md, "n8n's own database is on the
					// same server"). Only such an event may run twice, and only twice.
					sameServer,
					async () => {
						// A claim table with room left in its pages takes a few more rows on a full disk: at fillfactor
						// 10 every few claims need a new page, as in a table that keeps growing.
						await suite.admin!.query('ALTER TABLE processed_events SET (fillfactor = 10)');
						suite.server!.fillDisk();
						await new Promise((resolve) => setTimeout(resolve, FAULT_MS));
						suite.server!.freeDisk();
						// A server that could not write its WAL stops (PANIC); space freed, it is started again, as
						// systemd or an operator would. Claims and kept events are in the WAL it replays.
						const stopped = await suite.server!.startIfStopped();
						console.log(
							`disk storm: the server ${stopped ? 'had stopped; started again' : 'kept running'}`,
						);
					},
				),
			),
		180_000,
	);

	it(
		'the server comes back as a standby and is promoted: answers that make the sender retry, then every event once',
		() =>
			explainedByN8nLog(suite.n8n, () =>
				stormThrough(
					suite,
					'standby',
					nodeAnswer &&
						new RegExp(
							// A claim that keeps its event is one SELECT with data-modifying CTEs: Postgres names it so.
							`${nodeAnswer.source}is read-only \\(cannot execute (?:INSERT|SELECT) in a read-only transaction\\)`,
						),
					// The same exception as for the disk (a save cut off by the restart), not seen in a run so far.
					sameServer,
					async () => {
						await suite.server!.restartAsStandby();
						await new Promise((resolve) => setTimeout(resolve, FAULT_MS));
						await suite.server!.promote();
					},
				),
			),
		180_000,
	);
}

asRoot("n8n's own data on another server", () => faultSuite(false));
asRoot("n8n's own data on the same server", () => faultSuite(true));

async function stormThrough(
	suite: Suite,
	tag: string,
	nodeAnswer: RegExp | undefined,
	rerunAfterReportedFailure: boolean,
	fault: () => Promise<void>,
): Promise<void> {
	const { admin, n8n, executions } = suite as Required<Suite>;
	const plan = planStorm({ events: EVENTS, seed: 31, failureRate: 0, maxCopies: 3, tag });
	const keys = plan.events.map((event) => event.key);
	const since = await executions.lastId().catch(() => 0);
	let faulted: Promise<void> | undefined;
	const retryAnswers: Record<string, number> = {};
	const processed = new Map<string, number>();
	/** Events whose business step n8n reported failed (the template's 500 `failed` answers). */
	const reportedFailed = new Set<string>();
	const onAnswer = ({ event, status, body }: ProviderAnswer) => {
		if (status === 200 && body.status === 'processed')
			processed.set(event.key, (processed.get(event.key) ?? 0) + 1);
		if (status === 500 && body.status === 'failed') reportedFailed.add(event.key);
		if (status < 200 || status >= 300) {
			const label = `${status} ${String(body.message ?? body.status ?? body.error ?? '')}`;
			retryAnswers[label] = (retryAnswers[label] ?? 0) + 1;
		}
	};
	const report = await runRetryingProvider({
		url: n8n.webhookUrl(webhookPathOf(template)),
		bursts: plan.bursts,
		concurrency: 4,
		retryDelayMs: { min: 300, max: 1_000 },
		// The deadline bounds the storm, not a count: a claim whose execution died with n8n's own database is
		// answered 409 until its 20 s lease ends, some 30 attempts at these delays (CI once used up 40).
		maxAttempts: 1_000,
		deadlineMs: 120_000,
		beforeRequest: (requestNumber) => {
			if (requestNumber === Math.ceil(plan.deliveries / 3)) faulted = fault();
		},
		onAnswer,
	});
	await faulted;

	const business = await admin.query<{ event_key: string; n: number }>(
		'SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key = ANY($1) GROUP BY 1',
		[keys],
	);
	const claims = await admin.query<{ key: string; lease_until: Date | null }>(
		'SELECT key, lease_until FROM processed_events WHERE key = ANY($1)',
		[keys],
	);
	const failedRuns = await executions.failures(template.id, since);
	console.log(
		`${tag} storm through n8n: ${JSON.stringify(
			{
				...report,
				retryAnswers,
				failedRuns,
				claims: await claimsByStatus(admin, 'processed_events'),
			},
			null,
			1,
		)}`,
	);

	expect(report.undelivered).toEqual([]);
	// Every answer that was not a 2xx asked the sender to retry: a 5xx, or 409 while another delivery runs.
	const statuses = Object.keys(retryAnswers).map((label) => Number(label.split(' ')[0]));
	expect(statuses.filter((status) => status !== 409 && (status < 500 || status > 599))).toEqual([]);
	expect(statuses.filter((status) => status >= 500).length).toBeGreaterThan(0);
	if (nodeAnswer)
		expect(Object.keys(retryAnswers)).toContainEqual(expect.stringMatching(nodeAnswer));
	const ranTwice = business.rows.filter((row) => row.n !== 1);
	console.log(
		`${tag} storm: ${ranTwice.length} business step(s) ran twice, ${reportedFailed.size} reported failed`,
	);
	const rerunsAllowed = rerunAfterReportedFailure ? reportedFailed : new Set<string>();
	expect(ranTwice.filter((row) => row.n !== 2 || !rerunsAllowed.has(row.event_key))).toEqual([]);
	expect(business.rows).toHaveLength(EVENTS);
	expect(claims.rows.filter((row) => row.lease_until !== null)).toEqual([]);
	expect(claims.rows).toHaveLength(EVENTS);
	expect([...processed.values()].filter((n) => n !== 1)).toEqual([]);
	expect(processed.size).toBe(EVENTS);
}
