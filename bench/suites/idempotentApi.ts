// An Idempotency-Key API in real n8n (workflows/idempotent-api-endpoint.json as shipped, its order step
// held 300 ms, its Idempotency nodes on a pool of 10): rounds of 20 callers sending one key at the same
// moment. The first holds the claim while its order runs; the 19 others wait and must get its answer byte
// for byte. Beside it, in the same round: 19 callers sending the completed key at once, which need no wait
// (the stored answer is replayed at once): how long n8n itself takes to run 19 executions of that
// workflow started together. A waiter's delay is its answer's arrival (this
// process's clock) minus the end of the holder's Complete in n8n's saved run data (n8n's clock, one host).
import { randomBytes } from 'node:crypto';

import { callApi, ordersFor } from '../../harness/webhooks/apiCaller';
import { inN8n } from '../lib/benchmark';
import type { N8nExecutions } from '../../harness/n8n/executions';
import { sampleBusyConnections } from '../lib/busyConnections';
import { SMALL_POOL_CONNECTIONS } from '../lib/n8nWorkflows';
import { formatMs, summarize } from '../lib/stats';

const CALLERS = 20;
const COMPLETE_NODE = 'Complete and Store the Answer';
const TARGET = { medianMs: 50, p99Ms: 250 };

export const title = '4c. An Idempotency-Key API: callers waiting for a running claim, in real n8n';
export const run = inN8n(async ({ n8n, pool, quick, log, check }) => {
	const runs = n8n.executions;
	if (!runs)
		return { skipped: "n8n keeps its data in SQLite: no run data to read Complete's end from" };
	const rounds = quick ? 2 : 10;
	const waits: number[] = [];
	const replays: number[] = [];
	let busiest = 0;
	let orders = 0;
	for (let round = 0; round < rounds; round++) {
		const key = `bench_${randomBytes(6).toString('hex')}`;
		const since = await runs.lastId();
		const sampler = sampleBusyConnections(pool);
		const answers = await Promise.all(
			Array.from({ length: CALLERS }, () => post(n8n.url('api'), key)),
		);
		busiest = Math.max(busiest, await sampler.stop());
		const made = await ordersFor(pool, key);
		orders += made;
		check(made === 1, `Idempotency-Key API, round ${round}: ${made} orders for one key`);
		const first = answers[0];
		check(
			first.status === 201 && answers.every((a) => a.status === 201 && a.body === first.body),
			`Idempotency-Key API, round ${round}: answers differ (${[...new Set(answers.map((a) => `${a.status} ${a.body}`))].join(' | ')})`,
		);
		const saved = await finishedRuns(runs, n8n.workflowId('api'), since, CALLERS);
		const holders = saved.filter((execution) => execution.ends[COMPLETE_NODE] !== undefined);
		check(holders.length === 1, `Idempotency-Key API, round ${round}: ${holders.length} holders`);
		const completedAt = holders[0]?.ends[COMPLETE_NODE] ?? NaN;
		// The holder's own answer is the first after its Complete; the others waited.
		const after = answers.map((answer) => answer.arrivedAt - completedAt).sort((a, b) => a - b);
		waits.push(...after.slice(1));

		const sent = Date.now();
		const again = await Promise.all(
			Array.from({ length: CALLERS - 1 }, () => post(n8n.url('api'), key)),
		);
		check(
			again.every((answer) => answer.status === 201 && answer.body === first.body),
			`Idempotency-Key API, round ${round}: a replay differs from the first answer`,
		);
		replays.push(...again.map((answer) => answer.arrivedAt - sent));
	}
	const wait = summarize(waits);
	const replay = summarize(replays);
	log(
		`Idempotency-Key API: ${waits.length} waiting callers answered after the holder's Complete: median ${formatMs(wait.p50)}, p99 ${formatMs(wait.p99)}; ${CALLERS - 1} replays at once: median ${formatMs(replay.p50)}, p99 ${formatMs(replay.p99)}; busiest ${busiest} of ${SMALL_POOL_CONNECTIONS} connections`,
	);
	return {
		rows: [
			{
				measure: `${CALLERS - 1} waiting callers: answer after the holder's Complete (median; p99)`,
				value: `${formatMs(wait.p50)}; ${formatMs(wait.p99)}`,
				target: `≤ ${TARGET.medianMs} ms; ≤ ${TARGET.p99Ms} ms`,
				met: wait.p50 <= TARGET.medianMs && wait.p99 <= TARGET.p99Ms,
			},
			{
				measure: `${CALLERS - 1} callers replaying the completed key at once, no wait: answer after sending (median; p99)`,
				value: `${formatMs(replay.p50)}; ${formatMs(replay.p99)}`,
				target: 'reported: what n8n takes for that many executions of the workflow at once',
			},
			{
				measure: `connections of a pool of ${SMALL_POOL_CONNECTIONS} busy at once while ${CALLERS - 1} callers wait (most sampled)`,
				value: String(busiest),
				target: "reported; every caller got the holder's answer (asserted)",
			},
			{
				measure: `orders per key, ${rounds} rounds of ${CALLERS} callers; answers identical to the first`,
				value: `${orders / rounds}; all`,
				target: '1; all (asserted)',
				met: orders === rounds,
			},
		],
		details:
			`${rounds} rounds of ${CALLERS} callers POSTing one Idempotency-Key at once to the shipped API template (order ` +
			`step held 300 ms, Wait for Running Claim 10 s, the Idempotency nodes on a pool of ${SMALL_POOL_CONNECTIONS}), ` +
			`then ${CALLERS - 1} callers replaying the completed key at once. Waiting callers, answer after the holder's ` +
			`Complete: median ${formatMs(wait.p50)}, p99 ${formatMs(wait.p99)}, max ${formatMs(wait.max)}. Replays, answer ` +
			`after sending: median ${formatMs(replay.p50)}, p99 ${formatMs(replay.p99)}. n8n runs every execution on one ` +
			`event loop, so ${CALLERS - 1} answers leave one after another, waiting or not; section 1c measures the node's ` +
			`own wake-up without n8n.`,
	};
});

const post = (url: string, key: string) =>
	callApi(url, JSON.stringify({ item: 'bench', quantity: 1 }), { 'idempotency-key': key });

/** The round's executions once n8n has saved them all (it answers before it saves). */
async function finishedRuns(runs: N8nExecutions, workflowId: string, since: number, count: number) {
	const deadline = Date.now() + 30_000;
	for (;;) {
		const saved = await runs.nodeEndTimes(workflowId, since);
		if (saved.length >= count || Date.now() > deadline) return saved;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}
