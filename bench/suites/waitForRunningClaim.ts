// Waiting for a running claim: an Idempotency-Key API (workflows/idempotent-api-endpoint.json) in real
// n8n, rounds of 20 callers sending one key at the same moment; the first holds the claim while its order
// step runs (300 ms), the other 19 wait (Wait for Running Claim). The template's Idempotency nodes share a
// pool of 10 connections. Per waiting caller: how long after the holder's Complete its answer arrived
// (Complete's end from n8n's saved run data, the answer by this process's clock; one host, one clock),
// which includes the waiter's own Respond node and HTTP. Sampled every few milliseconds: how many of that
// pool's connections were busy at once (pg_stat_activity). Asserted: one order per round, and every
// caller answered byte for byte as the holder was.
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import { inN8n } from '../lib/benchmark';
import type { BenchN8n } from '../lib/benchN8n';
import { SMALL_POOL_CONNECTIONS } from '../lib/n8nWorkflows';
import { formatMs, summarize } from '../lib/stats';

const CALLERS = 20;
const COMPLETE_NODE = 'Complete and Store the Answer';
const WAKE_TARGET = { medianMs: 50, p99Ms: 250 };

export const title = '4c. Waiting for a running claim: an Idempotency-Key API';
export const run = inN8n(async ({ n8n, pool, quick, log, check }) => {
	if (!n8n.runs)
		return { skipped: "n8n keeps its data in SQLite: no run data to read Complete's end from" };
	const rounds = quick ? 2 : 10;
	const delays: number[] = [];
	const wakes: number[] = [];
	let busiest = 0;
	let orders = 0;
	for (let round = 0; round < rounds; round++) {
		const key = `bench_${randomBytes(6).toString('hex')}`;
		const since = await n8n.runs.lastId();
		const sampler = busyConnectionSampler(pool);
		const answers = await Promise.all(
			Array.from({ length: CALLERS }, () => post(n8n.url('api'), key)),
		);
		busiest = Math.max(busiest, await sampler.stop());
		const { rows } = await pool.query(
			'SELECT count(*)::int AS n FROM business_log WHERE event_key = $1',
			[`orders-api:evt:${key}`],
		);
		orders += rows[0].n;
		check(rows[0].n === 1, `waiting callers, round ${round}: ${rows[0].n} orders for one key`);
		const first = answers[0];
		check(
			first.status === 201 &&
				answers.every((answer) => answer.status === first.status && answer.body === first.body),
			`waiting callers, round ${round}: answers differ (${[...new Set(answers.map((a) => `${a.status} ${a.body}`))].join(' | ')})`,
		);
		const runs = await waitForRuns(n8n.runs, since, CALLERS);
		const holders = runs.filter((run) => run.ends[COMPLETE_NODE] !== undefined);
		check(
			holders.length === 1,
			`waiting callers, round ${round}: ${holders.length} holders ran Complete`,
		);
		const completedAt = holders[0]?.ends[COMPLETE_NODE] ?? NaN;
		// The holder's own answer is the earliest after its Complete; the 19 others waited.
		const afterComplete = answers
			.map((answer) => answer.arrivedAt - completedAt)
			.sort((a, b) => a - b);
		delays.push(...afterComplete.slice(1));
		wakes.push(
			...runs
				.filter((run) => run !== holders[0])
				.map((run) => run.ends['Idempotency Claim'] - completedAt),
		);
	}
	const wake = summarize(delays);
	const claimWake = summarize(wakes);
	log(
		`waiting callers: the claim node left Duplicate after the holder's Complete: median ${formatMs(claimWake.p50)}, p99 ${formatMs(claimWake.p99)}`,
	);
	log(
		`waiting callers: ${delays.length} waits over ${rounds} rounds; answer after the holder's Complete: median ${formatMs(wake.p50)}, p99 ${formatMs(wake.p99)}; busiest ${busiest} of ${SMALL_POOL_CONNECTIONS} connections`,
	);
	return {
		rows: [
			{
				measure: `waiting caller's answer after the holder's Complete, ${CALLERS} callers with one key (median; p99)`,
				value: `${formatMs(wake.p50)}; ${formatMs(wake.p99)}`,
				target: `≤ ${WAKE_TARGET.medianMs} ms; ≤ ${WAKE_TARGET.p99Ms} ms`,
				met: wake.p50 <= WAKE_TARGET.medianMs && wake.p99 <= WAKE_TARGET.p99Ms,
			},
			{
				measure: `connections of a pool of ${SMALL_POOL_CONNECTIONS} busy at once while ${CALLERS - 1} callers wait (most sampled)`,
				value: String(busiest),
				target: 'reported; a waiter that kept one would starve the holder (answers asserted below)',
			},
			{
				measure: `orders per key, ${rounds} rounds of ${CALLERS} callers; answers identical to the holder's`,
				value: `${orders / rounds}; all`,
				target: '1; all (asserted)',
				met: orders === rounds,
			},
		],
		details:
			`${rounds} rounds of ${CALLERS} callers POSTing one Idempotency-Key at the same moment to the shipped API ` +
			`template (order step held 300 ms, Wait for Running Claim 10 s, its Idempotency nodes on a pool of ` +
			`${SMALL_POOL_CONNECTIONS}). A waiter's delay is its answer's arrival (this process's clock) minus the end ` +
			`of the holder's Complete node in n8n's saved run data (n8n's clock, the same host): its wake-up, its ` +
			`Respond node and the HTTP answer. Waiters look at the claim every 10–50 ms with one short read each ` +
			`and hold no connection in between. ${delays.length} waits: min ${formatMs(Math.min(...delays))}, median ` +
			`${formatMs(wake.p50)}, p99 ${formatMs(wake.p99)}, max ${formatMs(wake.max)}. Busy connections of that ` +
			`pool (state other than idle in pg_stat_activity, application_name n8n-nodes-idempotency) were sampled ` +
			`every 2 ms: at most ${busiest}.`,
	};
});

interface Answer {
	status: number;
	body: string;
	arrivedAt: number;
}

async function post(url: string, key: string): Promise<Answer> {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'idempotency-key': key },
		body: JSON.stringify({ item: 'bench', quantity: 1 }),
	});
	const body = await response.text();
	return { status: response.status, body, arrivedAt: Date.now() };
}

/** The round's executions, once all have been saved (n8n answers before it saves). */
async function waitForRuns(runs: NonNullable<BenchN8n['runs']>, since: number, count: number) {
	const deadline = Date.now() + 30_000;
	for (;;) {
		const saved = await runs.nodeEndTimes('api', since);
		if (saved.length >= count || Date.now() > deadline) return saved;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/** Samples, every 2 ms until stopped, how many of the node's connections are busy; resolves to the most seen. */
function busyConnectionSampler(pool: Pool): { stop(): Promise<number> } {
	let most = 0;
	let running = true;
	const sampling = (async () => {
		const client = await pool.connect();
		try {
			while (running) {
				const { rows } = await client.query(
					"SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'n8n-nodes-idempotency' AND state <> 'idle'",
				);
				most = Math.max(most, rows[0].n);
				await new Promise((resolve) => setTimeout(resolve, 2));
			}
		} finally {
			client.release();
		}
	})();
	return {
		stop: async () => {
			running = false;
			await sampling;
			return most;
		},
	};
}
