/**
 * The bundled workflows in a real n8n 2.x: the package is packed, installed as a community package, the
 * templates imported and published exactly as shipped (credentials linked by name), and webhook deliveries
 * replayed over HTTP. Assertions read the business table and n8n's own execution records.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import {
	answered,
	deliver,
	postWithHeaderLines,
	refusedSignature,
	stripeSignature,
	type Delivery,
} from '../../harness/webhooks/deliver';
import { stackForSuite } from '../../harness/stackForSuite';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { businessRowsPerKey, claimRows } from '../../harness/postgres/appDatabase';
import { loadShippedWorkflow, webhookPathOf, type WorkflowJson } from '../../harness/n8n/workflows';
import { loadFixtureWorkflow } from '../support/fixtures';

const N8N_SCHEMA = 'n8n_e2e';
const RESPOND_DUPLICATE = 'Respond 200 duplicate';

const claimTemplate = loadShippedWorkflow('idempotency-claim-template.json');
const builtinTemplate = loadShippedWorkflow('builtin-nodes-template.json');
const cleanupWorkflow = loadShippedWorkflow('cleanup-processed-events.json');
const fingerprintWorkflow = loadFixtureWorkflow('fingerprint-mismatch.json');
const headerWorkflow = loadFixtureWorkflow('header-sent-twice.json');

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'idem_e2e',
		n8nSchema: N8N_SCHEMA,
		workflows: [
			claimTemplate,
			builtinTemplate,
			cleanupWorkflow,
			fingerprintWorkflow,
			headerWorkflow,
		],
		publish: [claimTemplate.id, builtinTemplate.id, fingerprintWorkflow.id, headerWorkflow.id],
	},
	(started) => ({ pool, n8n, executions } = started),
);

interface TemplateCase {
	label: string;
	workflow: WorkflowJson;
	/** Status for a repeat that arrives while the first delivery still runs (null: the built-in template has no such state). */
	inProgressStatus: number | null;
	/** The node that runs the business write (the node template's commits it with the claim's Complete). */
	businessStep: string;
}

const templateCases: TemplateCase[] = [
	{
		label: 'Idempotency Claim template',
		workflow: claimTemplate,
		inProgressStatus: 409,
		businessStep: 'Write and Complete',
	},
	{
		label: 'built-in nodes template',
		workflow: builtinTemplate,
		inProgressStatus: null,
		businessStep: 'Insert into business_log (example)',
	},
];

describe.each(templateCases)('$label', ({ label, workflow, inProgressStatus, businessStep }) => {
	const tag = `${label.split(' ')[0].toLowerCase()}_${randomBytes(3).toString('hex')}`;
	const url = () => n8n!.webhookUrl(webhookPathOf(workflow));
	const keyOf = (name: string) => `evt:evt_${tag}_${name}`;
	const event = (name: string, type = 'invoice.paid') =>
		JSON.stringify({
			id: `evt_${tag}_${name}`,
			object: 'event',
			type,
			data: { object: { amount: 1200 } },
		});

	step(
		'replay: A, A again with another signature, then B → 3 executions, 2 business rows',
		async () => {
			const since = await executions.lastId();

			const first = await deliver(url(), event('A'), { 'stripe-signature': stripeSignature() });
			const repeat = await deliver(url(), event('A'), { 'stripe-signature': stripeSignature() });
			const other = await deliver(url(), event('B'), { 'stripe-signature': stripeSignature() });

			expect(first).toEqual(answered('processed', keyOf('A')));
			expect(repeat).toEqual(answered('duplicate', keyOf('A')));
			expect(other).toEqual(answered('processed', keyOf('B')));

			// The deliveries' executions: the node template's Schedule Trigger (its retries) runs beside them.
			const runs = await executions.waitForFinished(workflow.id, since, 3, undefined, 'webhook');
			expect(runs.map((run) => run.status)).toEqual(['success', 'success', 'success']);
			expect(runs[0].nodesRun).toContain(businessStep);
			expect(runs[1].nodesRun).toContain(RESPOND_DUPLICATE);
			expect(runs[1].nodesRun).not.toContain(businessStep);
			expect(runs[2].nodesRun).toContain(businessStep);

			expect(await businessRowsPerKey(pool, [keyOf('A'), keyOf('B')])).toEqual({
				[keyOf('A')]: 1,
				[keyOf('B')]: 1,
			});
		},
	);

	step(
		'a body without an id is keyed by the SHA-256 of its raw bytes; the second delivery is a duplicate',
		async () => {
			// Unusual spacing and key order: a hash of re-serialised JSON would differ from the hash of these bytes.
			const raw = `{"type": "ping",   "note":"no id here" ,"via":"${tag}"}`;
			const key = `sha256:${createHash('sha256').update(raw).digest('hex')}`;

			const first = await deliver(url(), raw);
			const second = await deliver(url(), raw);

			expect(first).toEqual(answered('processed', key));
			expect(second).toEqual(answered('duplicate', key));
			expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
			expect(await claimRows(pool, key)).toBe(1);
		},
	);

	step('8 concurrent deliveries of one new event → exactly 1 business row', async () => {
		const since = await executions.lastId();
		const body = event('C');

		const answers = await Promise.all(Array.from({ length: 8 }, () => deliver(url(), body)));

		// The first claim wins; the others are completed duplicates (200) or, while it still runs, 409.
		const expectedStatus: Record<string, number | null> = {
			processed: 200,
			duplicate: 200,
			in_progress: inProgressStatus,
		};
		for (const answer of answers)
			expect(answer.status).toBe(expectedStatus[String(answer.body.status)]);
		expect(answers.filter((answer) => answer.body.status === 'processed')).toHaveLength(1);
		const runs = await executions.waitForFinished(workflow.id, since, 8, undefined, 'webhook');
		expect(runs).toHaveLength(8);
		expect(runs.filter((run) => run.nodesRun.includes(businessStep))).toHaveLength(1);
		expect(await businessRowsPerKey(pool, [keyOf('C')])).toEqual({ [keyOf('C')]: 1 });
	});

	if (workflow === claimTemplate) {
		step(
			'a failing business step keeps the event for a retry (500); a retry before it is due is told 409, one after runs it',
			async () => {
				const body = event('D', 'e2e.rejected');
				const key = keyOf('D');
				// Make the example business step fail for this event type only; the template itself is unchanged.
				await pool.query(
					"ALTER TABLE business_log ADD CONSTRAINT e2e_reject CHECK (event_type IS DISTINCT FROM 'e2e.rejected') NOT VALID",
				);
				try {
					const failed = await deliver(url(), body);
					expect(failed.status).toBe(500);
					expect(failed.body).toMatchObject({ status: 'failed', key, retry: 'scheduled' });
					expect(await claimRows(pool, key)).toBe(1);
					const { rows: kept } = await pool.query(
						'SELECT attempts, last_error IS NOT NULL AS has_error FROM processed_events_events WHERE key = $1',
						[key],
					);
					expect(kept).toEqual([{ attempts: 1, has_error: true }]);
					// The sender's retry before the backoff has passed: the event is held for its retry.
					const early = await deliver(url(), body);
					expect(early.status).toBe(409);
				} finally {
					await pool.query('ALTER TABLE business_log DROP CONSTRAINT IF EXISTS e2e_reject');
				}

				// Once it is due (its backoff moved to the past), the sender's retry takes it over and runs it.
				await pool.query(
					"UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1",
					[key],
				);
				const retried = await deliver(url(), body);
				expect(retried).toEqual(answered('processed', key));
				expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
				const { rows: left } = await pool.query(
					'SELECT count(*)::int AS n FROM processed_events_events WHERE key = $1',
					[key],
				);
				expect(left).toEqual([{ n: 0 }]);
			},
		);
	}
});

describe('payload fingerprint in real n8n', () => {
	step(
		'the claim node grows a third output, Mismatch, and routes a changed payload under a known key there',
		async () => {
			const url = n8n!.webhookUrl(webhookPathOf(fingerprintWorkflow));
			const id = `evt_fp_${randomBytes(3).toString('hex')}`;
			const first = await deliver(url, `{"id":"${id}","amount":5,"currency":"eur"}`);
			// Same payload, other spacing and key order: a plain duplicate under the canonical-JSON fingerprint.
			const reordered = await deliver(url, `{ "currency": "eur", "amount": 5, "id": "${id}" }`);
			const changed = await deliver(url, `{"id":"${id}","amount":500,"currency":"eur"}`);
			expect([first, reordered, changed]).toEqual([
				{ status: 200, body: { status: 'new', key: `evt:${id}` } },
				answered('duplicate', `evt:${id}`),
				{ status: 422, body: { status: 'mismatch', key: `evt:${id}` } },
			]);
		},
	);
});

describe('the node template and deliveries it can never process', () => {
	step(
		'an empty body is answered 400 with a true message (no retry can succeed), a forged one 401',
		async () => {
			const url = n8n!.webhookUrl(webhookPathOf(claimTemplate));
			const empty = await deliver(url, '');
			expect(empty.status).toBe(400);
			expect(empty.body).toMatchObject({ status: 'rejected' });
			expect(String(empty.body.message)).toContain('no key: the body is empty');
			const forged = await deliver(url, '{"id":"evt_forged_1"}', {
				'x-signature': `sha256=${'0'.repeat(64)}`,
			});
			expect(forged).toEqual(refusedSignature('signature_mismatch'));
			expect(await claimRows(pool, 'evt:evt_forged_1')).toBe(0);
		},
	);
});

describe('a key header sent twice, over real HTTP', () => {
	step(
		'n8n hands the node the joined value, which it refuses (400 through the error output), claiming nothing',
		async () => {
			const url = new URL(n8n!.webhookUrl(webhookPathOf(headerWorkflow)));
			const id = `msg_${randomBytes(3).toString('hex')}`;
			const twice = await postPing(url, [`${id}_A`, `${id}_B`]);
			expect(twice.status).toBe(400);
			expect(twice.body).toMatchObject({ status: 'refused', errorKind: 'bad_delivery' });
			expect(String(twice.body.message)).toContain(
				`header "webhook-id" holds "${id}_A, ${id}_B": it was sent more than once`,
			);
			const once = await postPing(url, [`${id}_A`]);
			// Only the single-header delivery claimed anything; the joined value never became a key.
			const claimed = await pool.query('SELECT key FROM header_claims WHERE key LIKE $1', [
				`%${id}%`,
			]);
			expect(claimed.rows).toEqual([{ key: `evt:${id}_A` }]);
			expect(once).toEqual({ status: 200, body: { status: 'new', key: `evt:${id}_A` } });
		},
	);
});

describe('cleanup workflow', () => {
	step(
		'run once by hand (n8n execute): keys older than 30 days are purged, fresh ones kept',
		async () => {
			await pool.query(`
			INSERT INTO processed_events (key, first_seen) VALUES
				('e2e:old:1', now() - interval '45 days'),
				('e2e:old:2', now() - interval '31 days'),
				('e2e:old:3', now() - interval '400 days'),
				('e2e:fresh:1', now() - interval '29 days'),
				('e2e:fresh:2', now())`);
			const before = await countKeys();

			// `n8n execute` needs the task broker's port: the server must be stopped first.
			await n8n!.stop();
			const run = await n8n!.execute(cleanupWorkflow.id);

			const report = run.data.resultData.runData['Report Deleted Count'][0].data!.main[0][0].json;
			expect(report).toMatchObject({ deleted: 3, batches: expect.any(Number) });
			expect(report.summary).toMatch(/^Deleted 3 idempotency keys/);
			const { rows } = await pool.query(
				"SELECT key FROM processed_events WHERE key LIKE 'e2e:%' ORDER BY key",
			);
			expect(rows.map((row) => row.key)).toEqual(['e2e:fresh:1', 'e2e:fresh:2']);
			expect(await countKeys()).toBe(before - 3);
		},
	);
});

/** A ping whose webhook-id header line is sent once per value. */
function postPing(url: URL, webhookIds: string[]): Promise<Delivery> {
	return postWithHeaderLines(
		url,
		{
			'content-type': 'application/json',
			'webhook-id': webhookIds.length === 1 ? webhookIds[0] : webhookIds,
		},
		'{"type":"ping"}',
	);
}

/** A test whose failure message ends with n8n's log tail. */
function step(name: string, body: () => Promise<void>): void {
	it(name, () => explainedByN8nLog(n8n, body));
}

async function countKeys(): Promise<number> {
	const { rows } = await pool.query('SELECT count(*)::int AS n FROM processed_events');
	return rows[0].n;
}
