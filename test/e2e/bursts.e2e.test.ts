/**
 * workflows/chat-burst-template.json in a real n8n 2.x, one process: 50 conversations, each two bursts
 * of 1 to 20 messages from one or two senders at once, with gaps inside the quiet period and pauses past
 * it (or, in a third of them, about as long as it). Every message must reach the work exactly once, each
 * burst run once, bursts split where the rules say (on the database's times), each sender's order kept,
 * and every message answered 200 at once (Collect answers once it is stored).
 *
 * CI sends bursts of 3.9 messages on average (390 messages); BURST_E2E_FULL=1 sends 7.65 (765).
 */
import type { Pool } from 'pg';

import type { N8nInstance } from '../../harness/n8n/instance';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { webhookPathOf } from '../../harness/n8n/workflows';
import {
	BURST_SIZES,
	burstFindings,
	fewestBursts,
	sendMessage,
	planConversations,
	runSummary,
	sendConversations,
	SMALL_BURST_SIZES,
	waitForBurstRuns,
} from '../../harness/webhooks/chatConversations';
import { stackForSuite } from '../../harness/stackForSuite';
import { BURST_RUNS_SQL, burstWorkflow } from '../../harness/n8n/burstWorkflows';

const RULES = {
	path: 'chat-burst-e2e',
	quietSeconds: 1,
	maxWaitSeconds: 8,
	maxItems: 20,
	// Long enough that a busy machine's slow work is never taken over: no holder dies in this suite.
	leaseSeconds: 30,
};
const workflow = burstWorkflow(RULES);

let pool: Pool;
let n8n: N8nInstance | undefined;

stackForSuite(
	{
		appDatabase: 'idem_bursts',
		n8nSchema: 'n8n_bursts',
		appSql: BURST_RUNS_SQL,
		workflows: [workflow],
		publish: [workflow.id],
	},
	(started) => ({ pool, n8n } = started),
);

it(
	'50 conversations, bursts of 1 to 20 messages from one or two senders: every message once, each burst once, split by the rules',
	() =>
		explainedByN8nLog(n8n, async () => {
			const quietMs = RULES.quietSeconds * 1000;
			const sizes = process.env.BURST_E2E_FULL === '1' ? BURST_SIZES : SMALL_BURST_SIZES;
			const conversations = planConversations({ conversations: 50, quietMs, seed: 32, sizes });
			const url = n8n!.webhookUrl(webhookPathOf(workflow));
			// Answered once stored, not once the burst ran: each answer came before its work ran.
			const answeredAt: Record<string, number> = {};
			for (const n of [1, 2, 3]) {
				const { status } = await sendMessage(url, {
					chat: `alone-${n}`,
					sender: 'a',
					updateId: 900_000 + n,
					text: `alone-${n}|a|1`,
				});
				expect(status).toBe(200);
				answeredAt[`alone-${n}`] = Date.now();
			}
			const alone = await waitForBurstRuns(pool, 3, 30_000);
			expect(
				alone.map((run) => ({ chat: run.chat, answeredFirst: answeredAt[run.chat] < run.ranAt })),
			).toEqual(
				expect.arrayContaining([1, 2, 3].map((n) => ({ chat: `alone-${n}`, answeredFirst: true }))),
			);
			expect(alone).toHaveLength(3);
			await pool.query('TRUNCATE burst_runs');
			const started = Date.now();
			// Started over 30 s: this n8n answers 10 to 15 messages a second on a busy 2-core machine, and a
			// sender waiting seconds for its answer types slower than the quiet period (nothing breaks then,
			// but every message is a burst of its own).
			const sent = await sendConversations(url, conversations, {
				quietMs,
				seed: 32,
				spreadMs: 30_000,
			});
			const runs = await waitForBurstRuns(pool, sent.length, 60_000);
			const findings = burstFindings(conversations, runs, {
				quietMs,
				maxItems: RULES.maxItems,
				maxWaitMs: RULES.maxWaitSeconds * 1000,
			});
			console.log(runSummary(sent, findings, Date.now() - started));
			expect(sent.filter((message) => message.status !== 200)).toEqual([]);
			expect({ ...findings, endedBy: undefined }).toEqual({
				messages: sent.length,
				bursts: expect.any(Number),
				lost: [],
				duplicated: [],
				reRun: [],
				ruleBreaks: [],
				orderBreaks: [],
				endedBy: undefined,
			});
			// At least the bursts the pauses force; more where Max Items or a slow answer cut one.
			expect(findings.bursts).toBeGreaterThanOrEqual(fewestBursts(conversations, quietMs));
			expect(runs.every((run) => !run.takenOver)).toBe(true);
			// Complete left nothing behind.
			const left = await pool.query(
				'SELECT (SELECT count(*) FROM processed_events_bursts)::int AS bursts, (SELECT count(*) FROM processed_events_burst_items)::int AS items',
			);
			expect(left.rows[0]).toEqual({ bursts: 0, items: 0 });
		}),
	240_000,
);
