// Throughput in real n8n: 8 concurrent clients, distinct events. Six published workflows measured in
// short alternating blocks: Webhook → Respond (floor), Webhook → Idempotency Claim → Respond, the same
// with Webhook Signature in front, the node template as shipped (Signature → Claim with a lease, keeping
// the event → Complete With Write → Respond; its retry schedule idle), its claim-once variant and the
// built-in-nodes template (workflows/). req/s and p50/p95 per workflow; the ratios are medians of
// per-round ratios, so load from elsewhere on a shared machine hits all six alike.
import { inN8n, ratioRow } from '../lib/benchmark';
import { combinedLoad, runLoad } from '../lib/loadGenerator';
import type { BenchN8n, BenchWorkflow } from '../lib/benchN8n';
import { eventBody, freshIds } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { formatMs, formatPercent, formatRate, median, summarize } from '../lib/stats';

type Side =
	'floor' | 'claim' | 'signedClaim' | 'nodeTemplate' | 'claimOnceTemplate' | 'builtinTemplate';
const CONCURRENCY = 8;
const SIDES: Array<{ key: Side & BenchWorkflow; label: string; expect: string }> = [
	{ key: 'floor', label: 'Webhook → Respond (floor)', expect: 'ok' },
	{ key: 'claim', label: 'Webhook → Idempotency Claim → Respond', expect: 'new' },
	{
		key: 'signedClaim',
		label: 'Webhook → Webhook Signature → Idempotency Claim → Respond',
		expect: 'new',
	},
	{
		key: 'nodeTemplate',
		label:
			'node template (workflows/idempotency-claim-template.json: Signature → Claim, lease → Complete With Write → Respond)',
		expect: 'processed',
	},
	{
		key: 'claimOnceTemplate',
		label:
			'claim-once variant of the node template (Webhook → Claim Once → business step → Respond)',
		expect: 'processed',
	},
	{
		key: 'builtinTemplate',
		label: 'built-in template (workflows/builtin-nodes-template.json)',
		expect: 'processed',
	},
];

export const title = '3. Throughput in real n8n';
export const run = inN8n(async ({ n8n, pool, quick, log, check }) => {
	const rounds = quick ? 3 : 12;
	const perBlock = quick ? 24 : 100;
	const warmup = quick ? 16 : 50;
	// Every id sent (warm-up too), per workflow.
	const sent = Object.fromEntries(SIDES.map((side) => [side.key, [] as string[]]));

	const block = async (side: (typeof SIDES)[number], count: number) => {
		const ids = freshIds(count, `evt_${side.key}_`);
		const result = await runLoad(
			ids.map((id) => ({ url: n8n.url(side.key), body: eventBody(id) })),
			{ concurrency: CONCURRENCY },
		);
		const wrong = result.answers.filter((a) => a.status !== 200 || a.body.status !== side.expect);
		check(
			wrong.length === 0,
			`n8n ${side.key}: ${wrong.length} answers were not 200 "${side.expect}" (first: ${wrong[0]?.status} ${JSON.stringify(wrong[0]?.body ?? null).slice(0, 120)})`,
		);
		sent[side.key].push(...ids);
		return result;
	};

	for (const side of SIDES) await block(side, warmup);
	// Rotated order, so each workflow runs early and late in a round.
	const perRound = await rotatedRounds(rounds, SIDES, (side) => block(side, perBlock));
	const roundRates = perRound.map(
		(round) =>
			Object.fromEntries(SIDES.map((side, i) => [side.key, round[i].perSecond])) as Record<
				Side,
				number
			>,
	);
	log(
		`n8n: ${SIDES.map((side) => `${side.key} ${formatRate(median(roundRates.map((rates) => rates[side.key])))} req/s`).join(', ')} (medians of ${rounds} rounds)`,
	);

	// Every template delivery was a new event: its business step ran exactly once.
	for (const key of ['nodeTemplate', 'claimOnceTemplate', 'builtinTemplate'] as const) {
		const { rows } = await pool.query(
			'SELECT count(*)::int AS rows, count(DISTINCT event_key)::int AS keys FROM business_log WHERE event_key = ANY($1::text[])',
			[sent[key].map((id) => `evt:${id}`)],
		);
		check(
			rows[0].rows === sent[key].length && rows[0].keys === sent[key].length,
			`n8n ${key}: business_log has ${rows[0].rows} rows for ${sent[key].length} events`,
		);
	}

	const claimCost = median(roundRates.map((r) => 1 - r.claim / r.floor));
	const signatureCost = median(roundRates.map((r) => 1 - r.signedClaim / r.claim));
	const signedClaimRatio = median(roundRates.map((r) => r.signedClaim / r.floor));
	const templateRatio = median(roundRates.map((r) => r.nodeTemplate / r.builtinTemplate));
	const claimOnceRatio = median(roundRates.map((r) => r.claimOnceTemplate / r.builtinTemplate));
	const totals = Object.fromEntries(
		SIDES.map((side, i) => [side.key, combinedLoad(perRound.map((round) => round[i]))]),
	);
	const timings = await nodeTimingsTable(n8n, perBlock);
	return {
		rows: [
			{
				measure: 'claim cost: 1 − (Webhook→Claim→Respond req/s ÷ floor req/s), 8 clients',
				value: formatPercent(claimCost),
				target: '≤ 15 %',
				met: claimCost <= 0.15,
			},
			ratioRow('Webhook→Signature→Claim→Respond req/s ÷ floor req/s, 8 clients', signedClaimRatio, {
				min: 0.85,
			}),
			{
				measure: 'signature check cost: 1 − (with the check ÷ without it), 8 clients',
				value: formatPercent(signatureCost),
				target: '≤ 10 %',
				met: signatureCost <= 0.1,
			},
			ratioRow('node template req/s ÷ built-in template req/s, 8 clients', templateRatio, {
				min: 1.25,
			}),
			// Same steps as the built-in template (claim, business step, answer); the node template adds the
			// signature check, the kept event and the Complete (in the business write's transaction).
			ratioRow('claim-once template req/s ÷ built-in template req/s, 8 clients', claimOnceRatio, {
				min: 1.25,
			}),
		],
		details: [
			`${CONCURRENCY} concurrent clients (fetch, keep-alive, loopback), every request a distinct event (Stripe-like JSON body with an id).`,
			`${warmup} warm-up requests per workflow, then ${rounds} rounds of one ${perBlock}-request block per workflow, order rotated each`,
			'round. The ratios are medians of the per-round ratios; the table aggregates all rounds.',
			'',
			'| workflow | requests | req/s | p50 ms | p95 ms | p99 ms |',
			'|---|---:|---:|---:|---:|---:|',
			...SIDES.map((side) => {
				const s = summarize(totals[side.key].latencies);
				return `| ${side.label} | ${s.n} | ${formatRate(totals[side.key].perSecond)} | ${formatMs(s.p50)} | ${formatMs(s.p95)} | ${formatMs(s.p99)} |`;
			}),
			...timings,
		].join('\n'),
	};
});

/** n8n's own per-node timings of the last executions of each workflow (from its execution records). */
async function nodeTimingsTable(n8n: BenchN8n, limit: number): Promise<string[]> {
	if (!n8n.executions) return [];
	const lines = [
		'',
		`Where n8n spends an execution (its own records of the last ${limit} executions per workflow; node times as n8n measures`,
		'them; "execution" = startedAt → stoppedAt, so the rest of a request is HTTP handling and waiting for n8n):',
		'',
		'| workflow | execution ms | per node: mean ms |',
		'|---|---:|---|',
	];
	for (const side of SIDES) {
		const t = await n8n.executions.timings(n8n.workflowId(side.key), limit);
		const nodes = t.nodes.map((n) => `${n.name} ${formatMs(n.meanMs)}`).join('; ');
		lines.push(`| ${side.key} | ${formatMs(t.meanMs)} | ${nodes} |`);
	}
	return lines;
}
