/**
 * The inbox in real n8n, as the inbox e2e suites run it (test/e2e/inbox*.e2e.test.ts): the shipped GitHub
 * template (Keep Event, Write and Complete, Retry Later, its own retry schedule) with the settings a suite
 * needs, as one workflow that takes the deliveries and copies that run its retries; a sender that never
 * retries (GitHub's way: one signed delivery per event); a business write whose failures are planned per
 * attempt (a trigger on business_log, so it holds whichever workflow writes business_log); and the outcome
 * read from Postgres: every good event's business row once, the poison ones dead letters, nothing left
 * processing.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

import {
	IDEMPOTENCY_CREDENTIAL,
	SIGNING_CREDENTIAL,
	TEMPLATE_SIGNING_SECRET,
} from '../../harness/n8n/credentials';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { loadShippedWorkflow, type WorkflowJson } from '../../harness/n8n/workflows';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { deliver } from '../../harness/webhooks/deliver';
import { seededRandom } from '../../harness/webhooks/seededRandom';
import { githubHeader } from '../../harness/webhooks/signers';
import { templateVariant, type NodeChange } from '../e2e/fixtures/templateVariants';
import { waitFor } from './waitFor';

/** A failure planned for every attempt: the event can only end as a dead letter. */
export const POISON = 1000;

const SCHEDULE_TRIGGER = 'n8n-nodes-base.scheduleTrigger';
const WEBHOOK = 'n8n-nodes-base.webhook';

type InboxTemplate = 'github-template.json' | 'stripe-template.json';

/** What a shipped template's claim keys start with: `<its Scope>:evt:` (the presets key by the event's id). */
export function keyPrefixOf(file: InboxTemplate): string {
	const claim = loadShippedWorkflow(file).nodes.find((node) => node.name === 'Idempotency Claim');
	const scope = (claim?.parameters.options as { scope?: string } | undefined)?.scope;
	return scope ? `${scope}:evt:` : 'evt:';
}

export interface InboxWorkflowOptions {
	/** The template that keeps events (default the GitHub one). */
	template?: InboxTemplate;
	maxAttempts: number;
	/** Claim With Lease's lease and Take Due Events' lease, in seconds (default: the templates' own). */
	leaseSeconds?: number;
	/** Retry Later's backoff (default: the templates' own). */
	backoff?: { baseSeconds: number; factor: number; capSeconds: number; jitter: number };
	/** Copies that run the template's retries (default one), each a workflow of its own. */
	retryWorkflows?: number;
	/** Each copy's Schedule Trigger fires every this many seconds (a divisor of 60) instead of every minute. */
	scheduleEverySeconds?: number;
}

/**
 * The shipped template with these settings, twice over: `template` takes the deliveries (its Schedule
 * Trigger removed), and each of `retryDue` is the whole template again, its webhook on a path nobody
 * calls, run by its Schedule Trigger or its Run Now. The nodes are the template's own; the split only lets
 * a suite tell the retry runs from the deliveries by workflow. (A copy keeps its Webhook node: a Respond to
 * Webhook node refuses to run in a workflow without one, and in a run no webhook started it answers nothing.)
 */
export function inboxWorkflows(options: InboxWorkflowOptions): {
	template: WorkflowJson;
	retryDue: WorkflowJson[];
} {
	const file = options.template ?? 'github-template.json';
	const credentials = {
		idempotencyWebhookSigningApi: SIGNING_CREDENTIAL,
		idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL,
	};
	const lease = options.leaseSeconds === undefined ? {} : { leaseSeconds: options.leaseSeconds };
	const retryLater: NodeChange = {
		parameters: {
			maxAttempts: options.maxAttempts,
			...(options.backoff ? { backoff: options.backoff } : {}),
		},
	};
	const variant = (path?: string) =>
		templateVariant(file, {
			path,
			credentials,
			nodes: {
				'Idempotency Claim': { parameters: { ...lease, maxAttempts: options.maxAttempts } },
				'Take Due Events': { parameters: { ...lease, maxAttempts: options.maxAttempts } },
				'Retry Later': retryLater,
			},
		});
	const template = withoutNodesOfType(variant(), SCHEDULE_TRIGGER);
	const webhookPath = String(template.nodes.find((node) => node.type === WEBHOOK)!.parameters.path);
	const retryDue = Array.from({ length: options.retryWorkflows ?? 1 }, (_, index) => {
		const workflow = variant(`${webhookPath}-retries-${index + 1}`);
		workflow.name = `${template.name}: retries${options.retryWorkflows === undefined ? '' : ` (${index + 1})`}`;
		const schedules = workflow.nodes.filter((node) => node.type === SCHEDULE_TRIGGER);
		if (schedules.length !== 1)
			throw new Error(`${file} has ${schedules.length} Schedule Triggers; adapt this`);
		if (options.scheduleEverySeconds !== undefined)
			schedules[0].parameters = {
				...schedules[0].parameters,
				rule: {
					interval: [{ field: 'seconds', secondsInterval: options.scheduleEverySeconds }],
				},
			};
		return workflow;
	});
	return { template, retryDue };
}

/** The workflow without its nodes of this type and their connections. */
function withoutNodesOfType(workflow: WorkflowJson, type: string): WorkflowJson {
	const removed = new Set(workflow.nodes.filter((node) => node.type === type).map((n) => n.name));
	if (removed.size === 0) throw new Error(`${workflow.name} has no ${type}; adapt this`);
	const connections = Object.fromEntries(
		Object.entries(workflow.connections).filter(([from]) => !removed.has(from)),
	);
	return {
		...workflow,
		nodes: workflow.nodes.filter((node) => !removed.has(node.name)),
		connections,
	};
}

/**
 * The two storms' settings (one process and queue mode): a lease longer than a business write and a Write
 * and Complete riding out the restart, short backoffs and two retry copies every 3 s, so a storm drains in
 * seconds on the real clock.
 */
export const STORM = {
	seed: Number(process.env.E2E_INBOX_STORM_SEED ?? 20261204),
	poisonEvents: 3,
	maxAttempts: 4,
	leaseSeconds: 20,
	scheduleEverySeconds: 3,
	restartDownMs: 3_000,
};

/**
 * The two storms' workflows (the GitHub template and two copies running its retries, with STORM's
 * settings) and what their stack is given: those workflows, all published, and the planned business write.
 */
export function stormWorkflows(): {
	github: WorkflowJson;
	retryIds: string[];
	stack: { workflows: WorkflowJson[]; publish: string[]; appSql: string };
} {
	const { template: github, retryDue } = inboxWorkflows({
		maxAttempts: STORM.maxAttempts,
		leaseSeconds: STORM.leaseSeconds,
		backoff: { baseSeconds: 1, factor: 2, capSeconds: 4, jitter: 0.2 },
		retryWorkflows: 2,
		scheduleEverySeconds: STORM.scheduleEverySeconds,
	});
	const retryIds = retryDue.map((workflow) => workflow.id);
	return {
		github,
		retryIds,
		stack: {
			workflows: [github, ...retryDue],
			publish: [github.id, ...retryIds],
			appSql: INBOX_PLAN_SQL,
		},
	};
}

/** The advisory lock class a planned slow write holds while it sleeps (its key's hashtext the other half). */
const SLEEPING_WRITE_LOCK = 7412202;

/**
 * `inbox_attempts`: the attempt each kept event is on, copied from the event table whenever a claim or Take
 * Due Events counts one (committed with it). A planned business write reads it there: Write and Complete
 * makes its Complete, which drops the kept event, before the write runs, in the same transaction, so the
 * write no longer sees the event table's row.
 */
export const KEPT_ATTEMPTS_SQL = `
	CREATE TABLE inbox_attempts (event_key text PRIMARY KEY, attempts integer NOT NULL);
	CREATE FUNCTION inbox_count_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO inbox_attempts (event_key, attempts) VALUES (NEW.key, NEW.attempts)
		ON CONFLICT (event_key) DO UPDATE SET attempts = EXCLUDED.attempts;
		RETURN NEW;
	END $$;
	CREATE TRIGGER inbox_count_attempt AFTER INSERT OR UPDATE OF attempts ON processed_events_events
		FOR EACH ROW EXECUTE FUNCTION inbox_count_attempt();`;

/**
 * Planned business-write outcomes, decided by the attempt the event is on (the inbox's own count, read from
 * KEPT_ATTEMPTS_SQL's copy): attempt ≤ failures raises; on attempt `slow_attempt` the write sleeps
 * `slow_seconds` after its row is inserted (long enough to kill n8n or a worker under it, or to restart the
 * server): inside Write and Complete's transaction, after its Complete, before its commit. While it sleeps
 * it holds an advisory lock named by its key, so a test can tell which event sleeps and in which process
 * (sleepingWrites). The server drops the statement of a client that is gone
 * (client_connection_check_interval), so a write whose n8n was killed never commits. Run as the app
 * database's owner.
 */
/**
 * The connection setting that names an n8n process (its PGOPTIONS: processEnv); PGAPPNAME would not
 * reach the package's connections, which carry their own application_name.
 */
const PROCESS_SETTING = 'e2e.process';

/** The environment that names an n8n process's connections for written_by and sleepingWrites. */
export function processEnv(name: string): Record<string, string> {
	return { PGOPTIONS: `-c ${PROCESS_SETTING}=${name}` };
}

export const INBOX_PLAN_SQL = `${KEPT_ATTEMPTS_SQL}
	CREATE TABLE inbox_plan (
		event_key text PRIMARY KEY,
		failures integer NOT NULL,
		slow_attempt integer,
		slow_seconds double precision NOT NULL DEFAULT 0
	);
	CREATE FUNCTION inbox_planned_failure() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE planned inbox_plan; attempt integer;
	BEGIN
		SELECT * INTO planned FROM inbox_plan WHERE event_key = NEW.event_key;
		IF FOUND THEN
			SELECT attempts INTO attempt FROM inbox_attempts WHERE event_key = NEW.event_key;
			-- No kept event (Keep Event off: the Release behaviour): every run counts as the first.
			attempt := coalesce(attempt, 1);
			IF attempt = planned.slow_attempt THEN
				-- The package's pool names its connections itself: the process's name comes as a setting.
				PERFORM set_config('application_name', current_setting('${PROCESS_SETTING}', true), true)
					WHERE current_setting('${PROCESS_SETTING}', true) <> '';
				PERFORM pg_advisory_xact_lock_shared(${SLEEPING_WRITE_LOCK}, hashtext(NEW.event_key));
				PERFORM pg_sleep(planned.slow_seconds);
			END IF;
			IF attempt <= planned.failures THEN
				RAISE EXCEPTION 'planned business failure (attempt %) of %', attempt, NEW.event_key;
			END IF;
		END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER inbox_planned_failure AFTER INSERT ON business_log
		FOR EACH ROW EXECUTE FUNCTION inbox_planned_failure();
	-- Who wrote each business row: the n8n process's name (PROCESS_SETTING), else the connection's.
	ALTER TABLE business_log ADD COLUMN written_by text
		DEFAULT coalesce(nullif(current_setting('${PROCESS_SETTING}', true), ''), current_setting('application_name'));
	DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET client_connection_check_interval = %L', current_database(), '200ms');
	END $$;`;

/**
 * The planned slow writes sleeping right now: each one's key and the process whose connection runs it
 * (the name processEnv gave it, set as the sleeping transaction's application_name). The write's values are query parameters, so the
 * key is read from the lock the plan takes, not from the statement's text.
 */
export async function sleepingWrites(pool: Pool): Promise<Array<{ process: string; key: string }>> {
	const { rows } = await pool.query<{ process: string; key: string }>(
		`SELECT a.application_name AS process, p.event_key AS key
		 FROM pg_locks l
		 JOIN pg_stat_activity a ON a.pid = l.pid
		 JOIN inbox_plan p ON l.objid = hashtext(p.event_key)::oid
		 WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objsubid = 2 AND a.wait_event = 'PgSleep'
		 ORDER BY a.backend_start`,
		[SLEEPING_WRITE_LOCK],
	);
	return rows;
}

export interface PlannedEvent {
	delivery: string;
	key: string;
	/** Attempts that fail (POISON: all of them). */
	failures: number;
	slow?: { attempt: number; seconds: number };
}

/** The GitHub template's keys: its Scope, then the preset's `evt:` + X-GitHub-Delivery. */
const GITHUB_KEY_PREFIX = keyPrefixOf('github-template.json');

/** An event as GitHub sends it (planned: its failures, and a slow attempt). */
export function plannedEvent(
	failures: number,
	slow?: { attempt: number; seconds: number },
): PlannedEvent {
	const delivery = randomUUID();
	return { delivery, key: `${GITHUB_KEY_PREFIX}${delivery}`, failures, slow };
}

export const isPoison = (event: PlannedEvent) => event.failures >= POISON;

/**
 * A storm's ordinary events: the first `poison` fail always, every tenth of the rest fails once, the others
 * succeed; shuffled by the seed, so the failures land all through the storm and a run can be repeated.
 */
export function stormEvents(count: number, poison: number, seed: number): PlannedEvent[] {
	const random = seededRandom(seed);
	const events = Array.from({ length: count }, (_, i) =>
		plannedEvent(i < poison ? POISON : i % 10 === 0 ? 1 : 0),
	);
	for (let i = events.length - 1; i > 0; i--) {
		const j = Math.floor(random() * (i + 1));
		[events[i], events[j]] = [events[j], events[i]];
	}
	return events;
}

export async function fillPlan(pool: Pool, events: PlannedEvent[]): Promise<void> {
	await pool.query(
		`INSERT INTO inbox_plan (event_key, failures, slow_attempt, slow_seconds)
		 SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::float8[])`,
		[
			events.map((e) => e.key),
			events.map((e) => e.failures),
			events.map((e) => e.slow?.attempt ?? null),
			events.map((e) => e.slow?.seconds ?? 0),
		],
	);
}

/** The event as GitHub delivers it: a push, signed with the template's secret. */
export function signedDelivery(event: PlannedEvent): {
	body: string;
	headers: Record<string, string>;
} {
	const body = JSON.stringify({ ref: 'refs/heads/main', after: event.delivery.replace(/-/g, '') });
	return {
		body,
		headers: {
			'x-github-event': 'push',
			'x-github-delivery': event.delivery,
			'x-hub-signature-256': githubHeader(TEMPLATE_SIGNING_SECRET, body),
		},
	};
}

/** What the sender heard for a delivery: `200 processed`, `202 accepted`, …, or `no answer`. */
export type SenderAnswer = string;
export const NO_ANSWER = 'no answer';

/** One delivery of this event, never retried: its answer as the sender heard it. */
export async function deliverOnce(url: string, event: PlannedEvent): Promise<SenderAnswer> {
	const { body, headers } = signedDelivery(event);
	try {
		const answer = await deliver(url, body, headers);
		return `${answer.status} ${String(answer.body.status ?? '')}`.trim();
	} catch {
		return NO_ANSWER;
	}
}

/** Each event delivered once, `concurrency` in flight; answers by key. */
export async function deliverEachOnce(
	url: string,
	events: PlannedEvent[],
	concurrency: number,
	answers: Map<string, SenderAnswer>,
): Promise<void> {
	const queue = [...events];
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			for (let event = queue.shift(); event; event = queue.shift())
				answers.set(event.key, await deliverOnce(url, event));
		}),
	);
}

/**
 * What a storm prints once it drained: its figures (the common ones, then the storm's own `figures`), the
 * retry workflows' runs since `firstExecution` among them, and the kept events' outcome beside what the
 * same sends lose without kept events (the Release template). The retry workflows' runs, for the storm's checks.
 */
export async function printStorm(storm: {
	title: string;
	executions: N8nExecutions;
	retryIds: string[];
	firstExecution: number;
	events: PlannedEvent[];
	answers: Map<string, SenderAnswer>;
	outcome: InboxOutcome;
	startedAt: number;
	figures: Record<string, unknown>;
	/** Said after the outcome. */
	alsoSay?: string;
}): Promise<Array<Record<string, number>>> {
	const { events, answers } = storm;
	const retryRuns = await Promise.all(
		storm.retryIds.map((id) =>
			storm.executions.settledStatusCounts(id, storm.firstExecution, 10_000),
		),
	);
	const release = lostWithoutKeptEvents(answers);
	const figures = {
		events: events.length,
		deliveries: answers.size,
		answersHeard: answersHeard(answers),
		plannedFailingOnce: events.filter((e) => e.failures === 1).length,
		poison: events.filter(isPoison).length,
		...storm.figures,
		retryWorkflowRuns: retryRuns,
		seconds: Math.round((Date.now() - storm.startedAt) / 1000),
	};
	console.log(`${storm.title} (seed ${STORM.seed}): ${JSON.stringify(figures, null, 1)}`);
	console.log(
		`${storm.title}, kept events: ${outcomeInWords(storm.outcome, events)}${storm.alsoSay ?? ''}. ` +
			'The same sends without kept events (the Release template): ' +
			`${release.lost} of ${events.length} events lost (${JSON.stringify(release.byAnswer)}: their only delivery ` +
			'failed or died, and the sender never asks again)',
	);
	return retryRuns;
}

/**
 * Today's figure beside the inbox's: with the Release template (no kept event) an event whose only delivery
 * was not answered "processed" (its business step failed: Release, 500; it died with n8n: no answer; the
 * claim's database was away: 503) is lost, because the sender never asks again. By the answer heard.
 */
export function lostWithoutKeptEvents(answers: Map<string, SenderAnswer>): {
	lost: number;
	byAnswer: Record<string, number>;
} {
	const byAnswer = answersHeard(answers);
	delete byAnswer['200 processed'];
	return { lost: Object.values(byAnswer).reduce((sum, n) => sum + n, 0), byAnswer };
}

/** The answers the sender heard, counted by answer. */
export function answersHeard(answers: Map<string, SenderAnswer>): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const answer of answers.values()) counts[answer] = (counts[answer] ?? 0) + 1;
	return counts;
}

/** Claims held or scheduled (not completed, not dead letters: their lease is infinity). */
export async function processingLeft(pool: Pool, table = 'processed_events'): Promise<number> {
	const { rows } = await pool.query(
		`SELECT count(*)::int AS n FROM ${table} WHERE lease_until IS NOT NULL AND lease_until <> 'infinity'`,
	);
	return rows[0].n as number;
}

/** Everything held or scheduled is due now (the one clock the inbox reads); dead letters stay parked. */
export async function makeDue(pool: Pool, table = 'processed_events'): Promise<void> {
	await pool.query(
		`UPDATE ${table} SET lease_until = now() - interval '1 second' WHERE lease_until IS NOT NULL AND lease_until <> 'infinity'`,
	);
}

export interface InboxOutcome {
	good: number;
	/** Good events with no business row. */
	lost: string[];
	/** Events with more than one business row. */
	doubled: string[];
	/** Claims still held or scheduled. */
	stuck: number;
	/** Keys parked as dead letters. */
	deadLetters: string[];
	/** Poison events that reached the business table. */
	poisonRan: string[];
}

/** The outcome in words: "297 good events, 0 lost, 0 doubled, 0 stuck, 3 dead letters (3 poison)". */
export function outcomeInWords(outcome: InboxOutcome, events: PlannedEvent[]): string {
	return (
		`${outcome.good} good events, ${outcome.lost.length} lost, ${outcome.doubled.length} doubled, ` +
		`${outcome.stuck} stuck, ${outcome.deadLetters.length} dead letters (${events.filter(isPoison).length} poison)`
	);
}

/** The outcome as Postgres holds it. */
export async function inboxOutcome(pool: Pool, events: PlannedEvent[]): Promise<InboxOutcome> {
	const good = events.filter((e) => !isPoison(e)).map((e) => e.key);
	const poison = events.filter(isPoison).map((e) => e.key);
	const rows = await businessRowsPerKey(
		pool,
		events.map((e) => e.key),
	);
	const { rows: dead } = await pool.query<{ key: string }>(
		'SELECT key FROM processed_events_events WHERE dead_at IS NOT NULL',
	);
	return {
		good: good.length,
		lost: good.filter((key) => !rows[key]),
		doubled: Object.keys(rows).filter((key) => rows[key] > 1),
		stuck: await processingLeft(pool),
		deadLetters: dead.map((row) => row.key).sort(),
		poisonRan: poison.filter((key) => rows[key]),
	};
}

/**
 * Drained as promised: every good event's business row exactly once, nothing doubled or stuck, exactly the
 * poison events kept as dead letters (after Max Attempts), and no other event kept.
 */
export async function expectDrained(
	pool: Pool,
	events: PlannedEvent[],
	maxAttempts: number,
): Promise<InboxOutcome> {
	const outcome = await inboxOutcome(pool, events);
	const poison = events.filter(isPoison).map((e) => e.key);
	expect(outcome.lost).toEqual([]);
	expect(outcome.doubled).toEqual([]);
	expect(outcome.poisonRan).toEqual([]);
	expect(outcome.stuck).toBe(0);
	const { rows: kept } = await pool.query<{ key: string }>(
		'SELECT key, dead_at IS NOT NULL AS dead, attempts FROM processed_events_events',
	);
	expect(kept.sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual(
		[...poison].sort().map((key) => ({ key, dead: true, attempts: maxAttempts })),
	);
	return outcome;
}

/**
 * Waits until nothing is held or scheduled any more (and `alsoDone`, when given, holds), for at most
 * `timeoutMs`; then the outcome check says what is left, key by key, rather than a time-out.
 */
export async function waitUntilDrained(
	pool: Pool,
	timeoutMs: number,
	alsoDone: () => Promise<boolean> = async () => true,
): Promise<void> {
	await waitFor(
		async () => (await processingLeft(pool)) === 0 && (await alsoDone()),
		timeoutMs,
		'drained',
	).catch(() => undefined);
}
