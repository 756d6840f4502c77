/**
 * workflows/chat-burst-template.json in n8n's queue mode (a main process, two workers and a webhook
 * processor on one Redis and one Postgres): the 50 conversations of the one-process suite through the
 * webhook processor, the bursts' holders waiting on either worker; then a worker killed while it holds
 * bursts (waiting for their quiet period to end): after the lease, Flush Due Bursts (every 2 s, on the
 * surviving worker) runs them, and every message still reaches the work exactly once. Messages whose
 * execution died before it stored them were not answered; their sender sends them again (same
 * update_id), as Telegram does, and Item ID keeps a message stored before the kill out of a second burst.
 *
 * CI sends bursts of 3.9 messages on average; BURST_E2E_FULL=1 sends 7.65, as the one-process suite.
 */
import type { Pool } from 'pg';

import type { N8nExecutions } from '../../harness/n8n/executions';
import { QueueModeCluster } from '../../harness/n8n/queueModeCluster';
import { webhookPathOf } from '../../harness/n8n/workflows';
import {
	BURST_SIZES,
	burstFindings,
	fewestBursts,
	planConversations,
	runSummary,
	sendConversations,
	SMALL_BURST_SIZES,
	waitForBurstRuns,
} from '../../harness/webhooks/chatConversations';
import { stackForSuite } from '../../harness/stackForSuite';
import { BURST_RUNS_SQL, burstWorkflow } from '../../harness/n8n/burstWorkflows';

const RULES = {
	path: 'chat-burst-queue',
	quietSeconds: 1,
	maxWaitSeconds: 8,
	maxItems: 20,
	leaseSeconds: 15,
};
const workflow = burstWorkflow(RULES);
const quietMs = RULES.quietSeconds * 1000;
const rules = { quietMs, maxItems: RULES.maxItems, maxWaitMs: RULES.maxWaitSeconds * 1000 };
const expectKept = (findings: ReturnType<typeof burstFindings>) =>
	expect({ ...findings, bursts: 0, endedBy: {}, reRun: [] }).toEqual({
		messages: findings.messages,
		bursts: 0,
		lost: [],
		duplicated: [],
		reRun: [],
		ruleBreaks: [],
		orderBreaks: [],
		endedBy: {},
	});

let pool: Pool;
let cluster: QueueModeCluster | undefined;
let executions: N8nExecutions;

stackForSuite(
	{
		appDatabase: 'idem_bursts_queue',
		n8nSchema: 'n8n_bursts_queue',
		appSql: BURST_RUNS_SQL,
		workflows: [workflow],
		publish: [workflow.id],
		// Every open burst keeps its holder's execution waiting: room for 50 of them and their joiners.
		launch: (n8n) => QueueModeCluster.create({ ...n8n, workers: 2, workerConcurrency: 60 }),
	},
	(started) => ({ pool, n8n: cluster, executions } = started),
);

const url = () => cluster!.webhookUrl(webhookPathOf(workflow));

it('50 conversations through the webhook processor and two workers: every message once, each burst once, split by the rules', async () => {
	const sizes = process.env.BURST_E2E_FULL === '1' ? BURST_SIZES : SMALL_BURST_SIZES;
	const conversations = planConversations({ conversations: 50, quietMs, seed: 33, sizes });
	const started = Date.now();
	// Started over 20 s: the cluster here answers ~15 messages a second at most, and a sender that waits
	// seconds for its answer types slower than the quiet period (nothing breaks, every message is a burst).
	const sent = await sendConversations(url(), conversations, {
		quietMs,
		seed: 33,
		spreadMs: 20_000,
	});
	const runs = await waitForBurstRuns(pool, sent.length, 60_000);
	const findings = burstFindings(conversations, runs, rules);
	console.log(runSummary(sent, findings, Date.now() - started));
	expect(sent.filter((message) => message.status !== 200)).toEqual([]);
	expectKept(findings);
	expect(findings.reRun).toEqual([]);
	expect(findings.bursts).toBeGreaterThanOrEqual(fewestBursts(conversations, quietMs));
	// Both workers held bursts.
	for (const worker of cluster!.workers)
		expect(worker.startedExecutions().length).toBeGreaterThan(0);
}, 240_000);

it('a worker killed while it holds open bursts: the other worker runs them after the lease, nothing lost, nothing twice', async () => {
	await pool.query('TRUNCATE burst_runs');
	// Slower typing, so bursts stay open for a while and the kill finds some held on the victim.
	const conversations = planConversations({
		conversations: 12,
		quietMs,
		seed: 34,
		sizes: [6, 9, 4, 12],
		burstsPerConversation: 1,
		firstUpdateId: 1_000_000,
	});
	const started = Date.now();
	// A request whose execution died on the victim is held by the webhook processor for minutes: the
	// sender gives up on it after 8 s and sends the message again.
	const sending = sendConversations(url(), conversations, {
		quietMs,
		seed: 34,
		gapShare: 0.8,
		answerTimeoutMs: 8_000,
	});
	const [victim] = cluster!.workers;
	// Kill once a few bursts are open, each with a waiting holder, and the victim runs some of those holders
	// (a joiner's execution ends at once): which worker a holder lands on is the queue's choice.
	const deadline = Date.now() + 20_000;
	while (Date.now() < deadline) {
		const { rows } = await pool.query(
			"SELECT count(*)::int AS n FROM processed_events_bursts WHERE state = 'open'",
		);
		if (rows[0].n >= 6 && (await executions.unfinishedAmong(victim.startedExecutions())) >= 2)
			break;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	await victim.process.kill();
	const sent = await sending;
	const total = conversations.flatMap((c) => c.bursts.flatMap((b) => b.senders.flat())).length;
	const runs = await waitForBurstRuns(pool, total, 90_000);
	const findings = burstFindings(conversations, runs, rules);
	console.log(`kill: ${runSummary(sent, findings, Date.now() - started)}`);
	expect(sent.filter((message) => message.status !== 200)).toEqual([]);
	expectKept(findings);
	// The victim held some of the open bursts: they were taken over, not lost.
	expect(runs.filter((run) => run.takenOver).length).toBeGreaterThan(0);
	// Only a burst taken over can have run twice (its work had started on the victim).
	for (const id of findings.reRun)
		expect(runs.find((run) => run.burstId === id)?.takenOver).toBe(true);
}, 240_000);
