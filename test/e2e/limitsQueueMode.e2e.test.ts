/**
 * workflows/limited-webhook-template.json (at most 2 events per customer at a time) in n8n's queue mode:
 * a main process, two workers and a webhook processor on one Redis and one Postgres. A storm of events over
 * a few customers, each event delivered twice at once, every business write (Write and Complete) slow (2 s)
 * and recording its start and end in Postgres; one worker is killed (SIGKILL) while it runs business writes.
 * The test reads what happened from Postgres: how many steps of a customer ran at any instant, how often
 * each event was written, what became of the writes the kill cut, which slots were still held, and whether
 * every slot came back once the leases ended.
 *
 * The workflow is test/e2e/fixtures/limitedWebhookWorkflow.ts: the shipped template with 15 s leases; its
 * write as shipped (a plain insert: no ON CONFLICT, no unique index).
 */
import type { Pool } from 'pg';

import { QueueModeCluster } from '../../harness/n8n/queueModeCluster';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { stackForSuite } from '../../harness/stackForSuite';
import { runRetryingProvider, type ProviderAnswer } from '../../harness/webhooks/retryingProvider';
import { rowsOf } from '../support/claimTableSql';
import {
	businessRunsSql,
	CUT_BUSINESS_RUNS_SQL,
	limitedWebhookWorkflow,
	MOST_AT_ONCE_SQL,
} from './fixtures/limitedWebhookWorkflow';

const CUSTOMERS = 4;
const EVENTS_PER_CUSTOMER = 8;
const STEP_SECONDS = 2;
const LEASE_SECONDS = 15;
const WORKER_NAMES = ['worker-1', 'worker-2'];

const { workflow, maxAtOnce } = limitedWebhookWorkflow({
	path: 'limited-queue-mode',
	leaseSeconds: LEASE_SECONDS,
});

let db: Pool;
let cluster: QueueModeCluster | undefined;

stackForSuite(
	{
		appDatabase: 'idem_limits_queue',
		n8nSchema: 'n8n_limits_queue',
		workflows: [workflow],
		publish: [workflow.id],
		// The events sent after the storm run 8 s each: two of a customer sent at once overlap even when
		// the loaded machine starts them seconds apart, and a second one finding no slot would give up
		// (Max Wait 5 s) and be answered 503.
		appSql: businessRunsSql(STEP_SECONDS, { keyLike: 'evt:evt\\_after\\_%', seconds: 8 }),
		launch: (n8n) =>
			QueueModeCluster.create({
				...n8n,
				workers: WORKER_NAMES.length,
				// The write's trigger names the worker from this setting (the node names its connections itself).
				workerEnv: (index) => ({ PGOPTIONS: `-c e2e.worker=${WORKER_NAMES[index]}` }),
			}),
	},
	(started) => ({ pool: db, n8n: cluster } = started),
);

const url = () => cluster!.webhookUrl(webhookPathOf(workflow));

interface Run {
	event_key: string;
	customer: string;
	worker: string;
}

it(
	`a storm over ${CUSTOMERS} customers with Max at Once ${maxAtOnce}, a worker killed (SIGKILL) mid-step: never more than ${maxAtOnce} steps of a customer at once, every event processed once, no slot kept once the leases end`,
	() =>
		explainedByN8nLog(cluster, async () => {
			const batch = events('storm', CUSTOMERS, EVENTS_PER_CUSTOMER);
			const keys = batch.map((event) => event.key);
			const processed = countProcessed();
			let victim: { name: string; inFlight: number } | undefined;
			let cut: string[] = [];
			let runningAtKill: string[] = [];

			const provider = runRetryingProvider({
				url: url(),
				bursts: batch.map((event) => ({ event, copies: 2 })),
				concurrency: 16,
				retryDelayMs: { min: 1_000, max: 2_000 },
				maxAttempts: 60,
				deadlineMs: 300_000,
				// A killed worker's job is never re-run and n8n holds its request open for minutes; a provider
				// gives up on it long before that. (On a loaded 2-core machine an answer can take over 20 s.)
				requestTimeoutMs: 60_000,
				onAnswer: processed.onAnswer,
			});
			// Kill the worker that is inside the most business steps, once some have run on both.
			const killed = (async () => {
				let running: Record<string, string[]> = {};
				await waitFor(async () => {
					const { rows } = await db.query('SELECT DISTINCT worker FROM business_runs');
					if (rows.length < WORKER_NAMES.length) return false;
					running = await businessWritesRunningByWorker();
					return Object.keys(running).length > 0;
				}, 120_000);
				const [name, keys] = Object.entries(running).sort((a, b) => b[1].length - a[1].length)[0];
				victim = { name, inFlight: keys.length };
				runningAtKill = keys;
				await cluster!.workers.find((worker) => worker.name === name)!.process.kill();
				// The victim's writes still running now lost their client mid-statement: Postgres finishes the
				// statement, but nobody sends its COMMIT. They held their slots until then: noted as runs. A server
				// that notices the lost client first has ended them already, and this finds none.
				const { rows } = await db.query<{ event_key: string }>(CUT_BUSINESS_RUNS_SQL, [
					name,
					STEP_SECONDS,
				]);
				cut = rows.map((row) => row.event_key);
			})();
			const [report] = await Promise.all([provider, killed]);
			const runs = await businessRuns(keys);
			const mostAtOnce = await mostAtOnceByCustomer('storm');
			const held = await heldSlots();
			console.log(
				`limits, queue mode: ${JSON.stringify({ victim, runningAtKill, cut, answers: report.answers, retriesByStatus: report.retriesByStatus, seconds: report.seconds, mostAtOnce, held, runsByWorker: countBy(runs, (run) => run.worker) })}`,
			);

			// 0 lost: every event answered 2xx (processed, or duplicate when the answer to its processing was
			// lost to a timeout), never processed twice; its claim completed, its row written once.
			expect(report.undelivered).toEqual([]);
			expect(processed.twice(keys)).toEqual([]);
			expect(await claimStatuses(keys)).toEqual({ completed: keys.length });
			expect(await businessRowsPerKey(db, keys)).toEqual(oncePerKey(keys));
			// Never more than Max at Once steps of a customer at any instant (counting the committed writes and
			// the ones the kill cut), and the storm reached it. Not for every customer: one whose slot the victim
			// held may run one at a time until that lease ends, and have no events left then (CI, once); the
			// storm after the leases end shows every customer reaching it.
			expect(mostAtOnce.every((most) => most <= maxAtOnce)).toBe(true);
			expect(Math.max(...mostAtOnce)).toBe(maxAtOnce);
			// 0 doubled: each event's write committed once, the writes the kill cut included: theirs was
			// rolled back with their Complete, and the survivor wrote them after the claim's lease.
			const survivor = WORKER_NAMES.find((name) => name !== victim!.name)!;
			const workersByKey = new Map<string, string[]>();
			for (const run of runs)
				workersByKey.set(run.event_key, [...(workersByKey.get(run.event_key) ?? []), run.worker]);
			expect(keys.filter((key) => workersByKey.get(key)?.length !== 1)).toEqual([]);
			expect(cut.map((key) => [key, workersByKey.get(key)])).toEqual(
				cut.map((key) => [key, [survivor]]),
			);
			// The kill did cut writes: of those running on the victim the moment before it, the survivor wrote
			// some (one that committed in that moment stays the victim's).
			expect(
				runningAtKill.filter((key) => workersByKey.get(key)?.[0] === survivor).length,
			).toBeGreaterThan(0);
			// Slots still held at the end can only be the victim's (its executions died between Take Slot and
			// Free Slot), unless the survivor took them over after their lease: every survivor's slot was freed.
			expect(held.length).toBeLessThanOrEqual(
				runs.filter((run) => run.worker === victim!.name).length +
					new Set([...cut, ...runningAtKill]).size,
			);

			// Once their leases end, every slot is free again: two events of each customer, sent once each,
			// both processed (none found no slot) and running side by side.
			await waitForLeasesToEnd();
			const pairs = events('after', CUSTOMERS, maxAtOnce);
			const after = await runRetryingProvider({
				url: url(),
				bursts: pairs.map((event) => ({ event, copies: 1 })),
				concurrency: pairs.length,
				retryDelayMs: { min: 1_000, max: 2_000 },
				maxAttempts: 1,
				deadlineMs: 60_000,
			});
			expect(after.answers).toEqual({ '200 processed': pairs.length });
			expect(await mostAtOnceByCustomer('after')).toEqual(
				customerIds(CUSTOMERS).map(() => maxAtOnce),
			);
		}),
	600_000,
);

function customerIds(count: number): string[] {
	return Array.from({ length: count }, (_, index) => `cus_${index + 1}`);
}

/** `perCustomer` events of each customer, interleaved; the template's claim key is `evt:<id>`. */
function events(tag: string, customers: number, perCustomer: number) {
	return Array.from({ length: perCustomer }, (_, n) =>
		customerIds(customers).map((customerId) => {
			const id = `evt_${tag}_${customerId}_${n}`;
			return {
				key: `evt:${id}`,
				body: JSON.stringify({ id, type: 'order.paid', customerId }),
			};
		}),
	).flat();
}

function countProcessed() {
	const processed = new Map<string, number>();
	const onAnswer = ({ event, status, body }: ProviderAnswer) => {
		if (status === 200 && body.status === 'processed')
			processed.set(event.key, (processed.get(event.key) ?? 0) + 1);
	};
	return {
		onAnswer,
		twice: (keys: string[]) => keys.filter((key) => (processed.get(key) ?? 0) > 1),
	};
}

const oncePerKey = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, 1]));

function countBy<T>(items: T[], by: (item: T) => string): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const item of items) counts[by(item)] = (counts[by(item)] ?? 0) + 1;
	return counts;
}

async function businessRuns(keys: string[]): Promise<Run[]> {
	const { rows } = await db.query<Run>(
		'SELECT event_key, customer, worker FROM business_runs WHERE event_key = ANY($1) ORDER BY started_at',
		[keys],
	);
	return rows;
}

/** Per customer (in order), the most of its steps that ran at one instant, among the events of `tag`. */
async function mostAtOnceByCustomer(tag: string): Promise<number[]> {
	const { rows } = await db.query<{ most: number }>(MOST_AT_ONCE_SQL, [`evt:evt\\_${tag}\\_%`]);
	return rows.map((row) => row.most);
}

/** Slots whose holder never freed them. */
async function heldSlots(): Promise<Array<{ key: string; slot: number }>> {
	const { rows } = await db.query(
		'SELECT key, slot FROM processed_events_slots WHERE claim_token IS NOT NULL ORDER BY key, slot',
	);
	return rows;
}

async function waitForLeasesToEnd(): Promise<void> {
	await waitFor(
		async () => {
			const { rows } = await db.query<{ n: number }>(
				'SELECT count(*)::int AS n FROM processed_events_slots WHERE lease_until > now()',
			);
			return rows[0].n === 0;
		},
		(LEASE_SECONDS + 10) * 1000,
	);
}

async function claimStatuses(keys: string[]): Promise<Record<string, number>> {
	const counts: Record<string, number> = {};
	for (const row of await rowsOf(db, 'processed_events'))
		if (keys.includes(row.key as string))
			counts[row.status as string] = (counts[row.status as string] ?? 0) + 1;
	return counts;
}

/**
 * The event keys of the business writes running right now, by the worker whose connection runs them: the
 * write's trigger sets its application_name to `<worker> <customer> <event key>` while it sleeps
 * (pg_stat_activity).
 */
async function businessWritesRunningByWorker(): Promise<Record<string, string[]>> {
	const { rows } = await db.query<{ worker: string; keys: string[] }>(
		`SELECT split_part(application_name, ' ', 1) AS worker,
		        array_agg(split_part(application_name, ' ', 3)) AS keys
		 FROM pg_stat_activity
		 WHERE datname = current_database() AND state = 'active' AND query LIKE 'INSERT INTO business_log%'
		   AND split_part(application_name, ' ', 1) = ANY($1)
		 GROUP BY 1`,
		[WORKER_NAMES],
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
