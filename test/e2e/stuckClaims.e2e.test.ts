/**
 * Nothing lost silently, in a real n8n 2.x: an execution is killed while its business step runs (it waits
 * on an advisory lock this test holds, and n8n is killed), its short lease runs out, and the shipped
 * stuck-claims report, run by hand with `n8n execute`, names exactly that key: not a completed key, not
 * a live lease, not an old completed key. Beside it, the shipped inbox alert (Summarize Inbox) names
 * exactly the scopes whose dead letters or due lag cross its thresholds.
 */
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

import { rowsOf } from '../support/claimTableSql';
import { deliver } from '../../harness/webhooks/deliver';
import { stackForSuite } from '../../harness/stackForSuite';
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
const ALERT_END = 'Send the alert here (replace me)';

const dyingWorkflow = loadFixtureWorkflow('stuck-claim.json');
const reportWorkflow = withNodeParameters(
	loadShippedWorkflow('stuck-claims-report.json'),
	'.idempotencyKey',
	{
		// The shipped threshold is 60 minutes; the killed claim here is seconds old. What the threshold
		// excludes is tested on a controlled clock in test/store/claims/stuckClaims.test.ts.
		stuckAfterMinutes: 0,
	},
);

const alertWorkflow = loadShippedWorkflow('inbox-alert.json');

let pool: Pool;
let n8n: N8nInstance | undefined;

stackForSuite(
	{
		appDatabase: 'stuck_e2e',
		n8nSchema: N8N_SCHEMA,
		workflows: [dyingWorkflow, reportWorkflow, alertWorkflow],
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

it('the inbox alert reports each scope over a threshold (any dead letter, due for 10 minutes), and no other', () =>
	explainedByN8nLog(n8n, async () => {
		// `n8n execute` needs the server stopped (the test above has stopped it already).
		await n8n!.stop();
		const tag = randomBytes(3).toString('hex');
		// Kept events as the inbox leaves them: [key, the claim's lease (SQL), parked, last error].
		const kept: Array<[string, string, boolean, string | null]> = [
			[`shop1:evt:${tag}_dead`, "'infinity'", true, 'HTTP 502 from the shipping API'],
			[`evt:${tag}_late`, "now() - interval '30 minutes'", false, 'timeout'],
			[`shop2:evt:${tag}_recent`, "now() - interval '1 minute'", false, null],
			[`shop2:evt:${tag}_running`, "now() + interval '5 minutes'", false, null],
			[`shop3:evt:${tag}_scheduled`, "now() + interval '20 minutes'", false, 'timeout'],
		];
		for (const [key, lease, parked, error] of kept) {
			await pool.query(
				`INSERT INTO processed_events (key, first_seen, lease_until, claim_token)
				 VALUES ($1, now() - interval '2 hours', ${lease}, '\\x01')`,
				[key],
			);
			// The claim node records the Scope it kept each event with; the unscoped key has none.
			const scope = key.startsWith('evt:') ? null : key.split(':')[0];
			await pool.query(
				`INSERT INTO processed_events_events (key, received_at, dead_at, attempts, last_error, scope, body)
				 VALUES ($1, now() - interval '2 hours', CASE WHEN $2 THEN now() - interval '1 hour' END, 3, $3, $4, '\\x7b7d')`,
				[key, parked, error, scope],
			);
		}

		const run = await n8n!.execute(alertWorkflow.id);
		const alerts = run.data.resultData.runData[ALERT_END][0].data!.main[0].map((item) => item.json);
		expect(alerts.map((alert) => alert.scope)).toEqual([null, 'shop1']);
		expect(alerts[0]).toMatchObject({
			kind: 'inbox_summary',
			table: 'public.processed_events',
			due: { count: 1, lagSeconds: expect.any(Number) },
			dead: { count: 0 },
			message: expect.stringMatching(
				/^Idempotency inbox public\.processed_events: 0 dead letter\(s\); 1 due event\(s\), the longest due for 3\d min\. Thresholds: 1 dead letter\(s\), due for 10 min\.$/,
			),
		});
		expect(alerts[1]).toMatchObject({
			dead: { count: 1, longestParkedSeconds: expect.any(Number) },
			message: expect.stringMatching(
				/^Idempotency inbox public\.processed_events \(scope shop1\): 1 dead letter\(s\), the longest parked 6\d min ago; 0 due event\(s\)\./,
			),
		});
		// Below the thresholds, so summarised but not alerted: shop2 (due for a minute, one running), shop3.
		const summary = run.data.resultData.runData['Summarize Inbox'][0].data!.main[0].map(
			(item) => item.json,
		);
		expect(summary.map((scope) => scope.scope)).toEqual([null, 'shop1', 'shop2', 'shop3']);
		expect(summary[2]).toMatchObject({ due: { count: 1 }, running: { count: 1 } });
		expect(summary[3]).toMatchObject({ scheduled: { count: 1 } });
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
