/**
 * A lease that expires while the first execution still works, in real n8n 2.x, on the shipped node
 * template (lease 5 s instead of 300 s): the sender redelivers the event once the lease has ended, while the
 * first execution is still busy.
 *
 * - The first execution's write is slow (a trigger sleeps 10 s in its insert): its Complete With Write
 *   locked the claim row before the write, so the redelivery cannot take the claim over; it waits for that
 *   commit and is answered `duplicate`. One business row.
 * - The first execution is slow before its write (a 10 s Wait node between Event to Process and Write and
 *   Complete, standing for a slow step there): the redelivery takes the claim over, and when the first
 *   execution reaches Write and Complete its write is rolled back and its item leaves the error output as
 *   `not_held`; the redelivery writes and completes. One business row.
 * - The former shape (test/e2e/fixtures/subworkflow-template.json: a sub-workflow business step, then Mark
 *   Key Completed), with the same slow insert: the redelivery takes over and runs the business step again.
 *   Two business rows: the double this template removes, and proof the first case can fail.
 *
 * The template's own retry schedule is disabled here: a Take Due Events run at the wrong second would be a
 * third contender for the expired claim, and the redelivery's answer would then depend on the clock.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

import { IDEMPOTENCY_CREDENTIAL, SIGNING_CREDENTIAL } from '../../harness/n8n/credentials';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { webhookPathOf, type WorkflowJson } from '../../harness/n8n/workflows';
import { businessRowsPerKey } from '../../harness/postgres/appDatabase';
import { deliver, type Delivery } from '../../harness/webhooks/deliver';
import { stackForSuite } from '../../harness/stackForSuite';
import { formerTemplate } from './fixtures/formerTemplate';
import { templateVariant } from './fixtures/templateVariants';

const LEASE_SECONDS = 5;
const SLOW_SECONDS = 10;
const FORMER_TABLE = 'former_events';
const credentials = {
	idempotencyWebhookSigningApi: SIGNING_CREDENTIAL,
	idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL,
};

function shippedWithLease(path: string): WorkflowJson {
	const workflow = templateVariant('idempotency-claim-template.json', {
		credentials,
		path,
		nodes: { 'Idempotency Claim': { parameters: { leaseSeconds: LEASE_SECONDS } } },
	});
	workflow.nodes.find((node) => node.name === 'Every Minute (retries)')!.disabled = true;
	return workflow;
}

/** The shipped template with a Wait of SLOW_SECONDS before Write and Complete. */
function withSlowStepBeforeWrite(workflow: WorkflowJson): WorkflowJson {
	const connections = workflow.connections as Record<
		string,
		{ main: Array<Array<{ node: string; type: string; index: number }>> }
	>;
	const into = connections['Event to Process'].main[0];
	if (into.length !== 1 || into[0].node !== 'Write and Complete')
		throw new Error('Event to Process no longer leads to Write and Complete; adapt this test');
	workflow.nodes.push({
		id: randomUUID(),
		name: 'Slow Step',
		type: 'n8n-nodes-base.wait',
		typeVersion: 1.1,
		position: [0, 600],
		parameters: { resume: 'timeInterval', amount: SLOW_SECONDS, unit: 'seconds' },
		webhookId: randomUUID(),
	});
	connections['Event to Process'].main[0] = [{ node: 'Slow Step', type: 'main', index: 0 }];
	connections['Slow Step'] = { main: [[{ node: 'Write and Complete', type: 'main', index: 0 }]] };
	return workflow;
}

const slowWrite = shippedWithLease('lease-slow-write');
const slowStep = withSlowStepBeforeWrite(shippedWithLease('lease-slow-step'));
const former = formerTemplate({
	path: 'lease-former',
	table: FORMER_TABLE,
	leaseSeconds: LEASE_SECONDS,
});

/** Inserts of keys that start with `evt:slow-` take SLOW_SECONDS (the first attempt's and every other). */
const APP_SQL = `
	CREATE TABLE ${FORMER_TABLE} (LIKE processed_events INCLUDING ALL);
	CREATE TABLE ${FORMER_TABLE}_events (LIKE processed_events_events INCLUDING ALL);
	CREATE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		PERFORM pg_sleep(${SLOW_SECONDS}); RETURN NEW; END $$;
	CREATE TRIGGER slow_write BEFORE INSERT ON business_log
		FOR EACH ROW WHEN (NEW.event_key LIKE 'evt:slow-%') EXECUTE FUNCTION slow_write();`;

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'lease_e2e',
		n8nSchema: 'n8n_lease',
		workflows: [slowWrite, slowStep, former],
		publish: [slowWrite.id, slowStep.id, former.id],
		appSql: APP_SQL,
	},
	(started) => ({ pool, n8n, executions } = started),
);

interface Redelivered {
	key: string;
	first: Delivery;
	redelivery: Delivery;
	/** n8n's execution of the first delivery (the first one after the test's checkpoint). */
	firstExecution: number;
}

/**
 * Delivers one event, and again once its claim's lease has ended while the first execution still runs;
 * both answers.
 */
async function redeliveredAfterLease(
	workflow: WorkflowJson,
	table: string,
	slowKey: boolean,
): Promise<Redelivered> {
	const id = `${slowKey ? 'slow-' : ''}${randomUUID()}`;
	const key = `evt:${id}`;
	const body = JSON.stringify({ id, type: 'order.paid' });
	const url = n8n!.webhookUrl(webhookPathOf(workflow));
	const since = await executions.lastId();
	const first = deliver(url, body);
	for (const deadline = Date.now() + 30_000; ;) {
		const { rows } = await pool.query(
			`SELECT 1 FROM ${table} WHERE key = $1 AND lease_until < clock_timestamp()`,
			[key],
		);
		if (rows.length > 0) break;
		if (Date.now() > deadline) throw new Error(`${key}'s lease never ended`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	const redelivery = await deliver(url, body);
	const [firstRun] = await executions.waitForFinished(workflow.id, since, 2, 60_000);
	return { key, first: await first, redelivery, firstExecution: firstRun.id };
}

async function claimOf(table: string, key: string) {
	const { rows } = await pool.query<{ lease_until: Date | null }>(
		`SELECT lease_until FROM ${table} WHERE key = $1`,
		[key],
	);
	return rows.map((row) => ({ completed: row.lease_until === null }));
}

it(
	'the write outlives the lease: the redelivery waits for its commit and is a duplicate; one row',
	() =>
		explainedByN8nLog(n8n, async () => {
			const run = await redeliveredAfterLease(slowWrite, 'processed_events', true);
			expect(run.first).toEqual({ status: 200, body: { status: 'processed', key: run.key } });
			expect(run.redelivery).toEqual({ status: 200, body: { status: 'duplicate', key: run.key } });
			expect(await businessRowsPerKey(pool, [run.key])).toEqual({ [run.key]: 1 });
			expect(await claimOf('processed_events', run.key)).toEqual([{ completed: true }]);
		}),
	120_000,
);

it(
	'a slow step before the write outlives the lease: the redelivery takes over and writes; the first is not_held and writes nothing',
	() =>
		explainedByN8nLog(n8n, async () => {
			const run = await redeliveredAfterLease(slowStep, 'processed_events', false);
			expect(run.redelivery).toEqual({ status: 200, body: { status: 'processed', key: run.key } });
			// The first execution's item left Write and Complete's error output as not_held; Retry Later then
			// found the claim not its own either, and the template answered 500 (the sender's retry is a duplicate).
			const [written, failed] = await executions.nodeOutputs(
				run.firstExecution,
				'Write and Complete',
			);
			expect(written ?? []).toEqual([]);
			expect(failed).toEqual([
				expect.objectContaining({
					error: 'not_held',
					message: expect.stringMatching(/another execution holds it now.*Nothing was written/),
				}),
			]);
			expect(run.first).toMatchObject({
				status: 500,
				body: { status: 'failed', key: run.key, retry: 'not_held' },
			});
			expect(await businessRowsPerKey(pool, [run.key])).toEqual({ [run.key]: 1 });
			expect(await claimOf('processed_events', run.key)).toEqual([{ completed: true }]);
		}),
	120_000,
);

it(
	'the former shape with the same slow write: the redelivery takes over and the business step runs twice',
	() =>
		explainedByN8nLog(n8n, async () => {
			const run = await redeliveredAfterLease(former, FORMER_TABLE, true);
			expect(run.redelivery).toEqual({ status: 200, body: { status: 'processed', key: run.key } });
			expect(await businessRowsPerKey(pool, [run.key])).toEqual({ [run.key]: 2 });
			console.log(
				`lease expiry, former shape: the first execution answered ${run.first.status} ${JSON.stringify(run.first.body)}; 2 business rows`,
			);
		}),
	120_000,
);
