// Waiting for a running claim, at the node: rounds of 20 one-item executions of the built claim node with
// one key at the same moment (Claim With Lease, Wait for Running Claim 10 s), on a pool of 10 connections.
// The first holds the claim; 300 ms later its claim is completed with a stored response, and the 19 others
// must leave Duplicate carrying it. Measured per waiter: when its execute() returned, after the Complete
// returned. Two holders, alternating rounds: one in this process (the Idempotency Key node's Complete,
// which also wakes this process's waiters at once) and one in another process, as a queue-mode worker's
// would be (the same UPDATE sent on a connection of its own: only the waiters' looks can see it).
// Sampled every 2 ms: how many of the nodes' connections were busy at once.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { webhookItem } from '../../harness/node/executeContext';
import type { Benchmark } from '../lib/benchmark';
import { sampleBusyConnections } from '../lib/busyConnections';
import { eventBody, freshIds, nodeRunner } from '../lib/nodeClaims';
import { formatMs, summarize } from '../lib/stats';

const TABLE = 'bench_wait';
const CALLERS = 20;
const POOL = 10;
const HOLD_MS = 300;
const TARGET = { medianMs: 50, p99Ms: 250 };
const RESPONSE = JSON.stringify({ statusCode: 201, headers: {}, body: '{"orderId":"o_1"}' });

type Holder = 'this process' | 'another process';
const HOLDERS: Holder[] = ['this process', 'another process'];

export const title = '1c. Waiting for a running claim, at the node';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const rounds = quick ? 2 : 10;
	const small = { ...credentials, maxConnections: POOL };
	const claimNode = nodeRunner(dist, 'IdempotencyClaim', small, TABLE);
	const keyNode = nodeRunner(dist, 'IdempotencyKey', small, TABLE);
	const claim = (id: string) =>
		claimNode([webhookItem(eventBody(id))], {
			keySource: 'auto',
			claimMode: 'lease',
			leaseSeconds: 60,
			waitSeconds: 10,
		});
	const complete = async (holder: Holder, claimed: INodeExecutionData) => {
		const result = claimed.json.idempotency as IDataObject;
		if (holder === 'another process') {
			await pool.query(
				`UPDATE ${TABLE} SET lease_until = NULL, claim_token = NULL, response = $2 WHERE key = $1`,
				[result.key, RESPONSE],
			);
			return;
		}
		await keyNode([claimed], {
			operation: 'complete',
			key: result.key,
			claimId: result.claimId,
			storeResponse: true,
			responseBodyType: 'text',
			responseText: '{"orderId":"o_1"}',
		});
	};
	await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
	await claim(freshIds(1)[0]); // creates the table, outside the timing

	const delays: Record<Holder, number[]> = { 'this process': [], 'another process': [] };
	let busiest = 0;
	for (let round = 0; round < rounds * HOLDERS.length; round++) {
		const holder = HOLDERS[round % HOLDERS.length];
		const [id] = freshIds(1);
		const [[claimed]] = await claim(id);
		const sampler = sampleBusyConnections(pool);
		const waiters = Array.from({ length: CALLERS - 1 }, () =>
			claim(id).then((outputs) => ({ outputs, at: performance.now() })),
		);
		await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
		await complete(holder, claimed);
		const completedAt = performance.now();
		const returned = await Promise.all(waiters);
		busiest = Math.max(busiest, await sampler.stop());
		const answered = returned.filter(
			({ outputs }) =>
				(outputs[1][0]?.json.idempotency as IDataObject)?.duplicateKind === 'completed',
		);
		check(
			answered.length === CALLERS - 1,
			`waiting at the node (${holder}), round ${round}: ${CALLERS - 1 - answered.length} waiters did not leave Duplicate completed`,
		);
		delays[holder].push(...returned.map(({ at }) => at - completedAt));
	}
	const summaries = Object.fromEntries(
		HOLDERS.map((holder) => [holder, summarize(delays[holder])]),
	) as Record<Holder, ReturnType<typeof summarize>>;
	for (const holder of HOLDERS)
		log(
			`waiting at the node, holder in ${holder}: returned after its Complete: median ${formatMs(summaries[holder].p50)}, p99 ${formatMs(summaries[holder].p99)}`,
		);
	return {
		rows: [
			...HOLDERS.map((holder) => ({
				measure: `waiter's execute() returns after the holder's Complete, ${CALLERS - 1} waiters, holder in ${holder} (median; p99)`,
				value: `${formatMs(summaries[holder].p50)}; ${formatMs(summaries[holder].p99)}`,
				target: `≤ ${TARGET.medianMs} ms; ≤ ${TARGET.p99Ms} ms`,
				met: summaries[holder].p50 <= TARGET.medianMs && summaries[holder].p99 <= TARGET.p99Ms,
			})),
			{
				measure: `connections of a pool of ${POOL} busy at once while ${CALLERS - 1} executions wait (most sampled)`,
				value: String(busiest),
				target: 'reported; every waiter left Duplicate with the answer (asserted)',
			},
		],
		details:
			`${rounds} rounds per holder of ${CALLERS} one-item executions of the built node with one key at the same ` +
			`moment (Claim With Lease, Wait for Running Claim 10 s, a pool of ${POOL}); the holder's claim is ` +
			`completed ${HOLD_MS} ms later. A waiter looks at the claim after 10 ms, then at gaps growing to 50 ms, ` +
			`with one short read, holding no connection in between; a Complete in its own process wakes it at once. ` +
			`Holder in this process: ${describe(summaries['this process'])}; in another process (only the looks see ` +
			`it): ${describe(summaries['another process'])}. Busy connections of the nodes' pools (pg_stat_activity, ` +
			`state other than idle) sampled every 2 ms: at most ${busiest} of ${POOL}.`,
	};
};

function describe(summary: ReturnType<typeof summarize>): string {
	return `median ${formatMs(summary.p50)}, p99 ${formatMs(summary.p99)}, max ${formatMs(summary.max)}`;
}
