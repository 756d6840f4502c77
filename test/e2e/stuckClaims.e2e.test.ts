/**
 * Nothing lost silently, in a real n8n 2.x: an execution is killed while its business step runs (it waits
 * on an advisory lock this test holds, and n8n is killed), its short lease runs out, and the shipped
 * stuck-claims report, run by hand with `n8n execute`, names exactly that key: not a completed key, not
 * a live lease, not an old completed key.
 */
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

import { rowsOf } from '../support/claimTableSql';
import { deliver } from '../../harness/webhooks/deliver';
import { stackForSuite } from '../support/stackForSuite';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import {
	loadShippedWorkflow,
	webhookPathOf,
	withNodeParameters,
} from '../../harness/n8n/workflows';
import { loadFixtureWorkflow } from '../support/fixtures';

const N8N_SCHEMA = 'n8n_e2e';
const BUSINESS_LOCK = 7412201; // the lock the fixture's business step waits for (test/e2e/fixtures/stuck-claim.json)
const REPORT_END = 'Send the report here (replace me)';

const dyingWorkflow = loadFixtureWorkflow('stuck-claim.json');
const reportWorkflow = withNodeParameters(
	loadShippedWorkflow('stuck-claims-report.json'),
	'.idempotencyKey',
	{
		// The shipped threshold is 60 minutes; the killed claim here is seconds old. What the threshold
		// excludes is tested on a controlled clock in test/store/stuckClaims.test.ts.
		stuckAfterMinutes: 0,
	},
);

let pool: Pool;
let n8n: N8nInstance | undefined;

stackForSuite(
	{
		appDatabase: 'stuck_e2e',
		n8nSchema: N8N_SCHEMA,
		workflows: [dyingWorkflow, reportWorkflow],
		publish: [dyingWorkflow.id],
	},
	(started) => ({ pool, n8n } = started),
);

it('an execution killed mid-way is reported once its lease expires, and nothing else is', () =>
	explainedByN8nLog(n8n, async () => {
		const tag = randomBytes(3).toString('hex');
		const stuckKey = `evt:evt_${tag}_killed`;
		const lockHolder: PoolClient = await pool.connect();
		try {
			await lockHolder.query('SELECT pg_advisory_lock($1)', [BUSINESS_LOCK]);
			const answer = await deliver(
				n8n!.webhookUrl(webhookPathOf(dyingWorkflow)),
				JSON.stringify({ id: `evt_${tag}_killed`, type: 'invoice.paid' }),
			);
			expect(answer.status).toBe(200);
			// The claim is made and the business step is waiting on the lock: the execution is mid-way.
			await waitUntilTrue(
				'the business step to wait on the lock',
				"SELECT count(*) = 1 AS done FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted",
				[BUSINESS_LOCK],
			);
			expect(await statusOf(stuckKey)).toBe('processing');

			// Killed, not shut down: one second of grace, then SIGKILL to n8n and its task runner.
			await n8n!.stop({ graceMs: 1_000 });
		} finally {
			await lockHolder.query('SELECT pg_advisory_unlock_all()');
			lockHolder.release();
		}

		// Rows as the node's compact table holds them: a claim is processing while its lease_until is set.
		await pool.query(
			`INSERT INTO processed_events (key, first_seen, last_seen, deliveries, lease_until, claim_token) VALUES
			 ($1, now() - interval '2 hours', now() - interval '1 hour', 2, NULL, NULL),
			 ($2, now() - interval '2 hours', NULL, NULL, now() + interval '1 hour', convert_to('live-holder', 'UTF8')),
			 ($3, now() - interval '40 days', NULL, NULL, NULL, NULL)`,
			[`evt:evt_${tag}_completed`, `evt:evt_${tag}_live`, `evt:evt_${tag}_old`],
		);
		// The fixture's lease is 2 s.
		await waitUntilTrue(
			'the lease to expire',
			'SELECT lease_until < now() AS done FROM processed_events WHERE key = $1',
			[stuckKey],
		);
		expect(await statusOf(stuckKey)).toBe('processing');

		const run = await n8n!.execute(reportWorkflow.id);
		const reported = run.data.resultData.runData[REPORT_END][0].data!.main[0].map(
			(item) => item.json,
		);
		expect(reported).toEqual([
			expect.objectContaining({
				kind: 'stuck_claim',
				table: 'public.processed_events',
				key: stuckKey,
				deliveries: 1,
				message: expect.stringContaining(`Stuck idempotency claim ${stuckKey} in`),
			}),
		]);
		const { rows } = await pool.query(
			'SELECT first_seen, lease_until FROM processed_events WHERE key = $1',
			[stuckKey],
		);
		expect(reported[0].firstSeen).toBe(rows[0].first_seen.toISOString());
		expect(reported[0].leaseUntil).toBe(rows[0].lease_until.toISOString());
	}));

async function statusOf(key: string): Promise<string | undefined> {
	const rows = await rowsOf(pool, 'processed_events');
	return rows.find((row) => row.key === key)?.status as string | undefined;
}

/** Polls `sql` until its first row's `done` is true. */
async function waitUntilTrue(what: string, sql: string, params: unknown[], timeoutMs = 30_000) {
	const deadline = Date.now() + timeoutMs;
	while ((await pool.query(sql, params)).rows[0]?.done !== true) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}
