// Memory in n8n: RSS of the n8n server process while it claims 100,000 keys, 100 per execution (Webhook
// with 100 events → Split Out → Idempotency Claim → Respond). Sampled after a warm-up and at the end.
import { inN8n } from '../lib/benchmark';
import { runLoad } from '../lib/loadGenerator';
import { rssOf } from '../lib/benchN8n';
import { freshIds } from '../lib/nodeClaims';
import { formatMiB } from '../lib/stats';

const PER_EXECUTION = 100;
const CONCURRENCY = 4;

export const title = '6. Memory of the n8n process';
export const run = inN8n(async ({ n8n, quick, log, check }) => {
	const pid = n8n.pid;
	if (!pid) return { skipped: 'could not find the n8n server process to read its RSS' };
	const totalClaims = quick ? 5_000 : 100_000;
	const settleMs = quick ? 1_000 : 3_000;
	const warmupClaims = totalClaims / 5;
	const steps = 4;
	const samples: Array<{ claims: number; rss: number }> = [];
	const sample = async (claims: number) => {
		// Give n8n a moment to finish saving executions before reading.
		await new Promise((resolve) => setTimeout(resolve, settleMs));
		samples.push({ claims, rss: rssOf(pid) });
	};
	const claimMany = async (count: number) => {
		const requests = Array.from({ length: count / PER_EXECUTION }, () => ({
			url: n8n.url('batchClaim'),
			body: JSON.stringify({ events: freshIds(PER_EXECUTION).map((id) => ({ id })) }),
		}));
		const result = await runLoad(requests, { concurrency: CONCURRENCY });
		const wrong = result.answers.filter(
			(a) => a.status !== 200 || a.body.count !== PER_EXECUTION || a.body.status !== 'new',
		);
		check(
			wrong.length === 0,
			`n8n batched claims: ${wrong.length} answers were not 200 with ${PER_EXECUTION} new (first: ${wrong[0]?.status} ${JSON.stringify(wrong[0]?.body ?? null).slice(0, 120)})`,
		);
		return result;
	};

	await sample(0);
	await claimMany(warmupClaims);
	await sample(warmupClaims);
	let done = warmupClaims;
	let ms = 0;
	for (let step = 1; step <= steps; step++) {
		const count = (totalClaims - warmupClaims) / steps;
		const result = await claimMany(count);
		ms += result.wallMs;
		done += count;
		await sample(done);
		log(
			`n8n memory: ${done.toLocaleString('en')} claims, RSS ${formatMiB(samples[samples.length - 1].rss)}`,
		);
	}
	const claimsPerSecond = (totalClaims - warmupClaims) / (ms / 1000);
	const afterWarmup = samples[1].rss;
	const end = samples[samples.length - 1].rss;
	const growth = (end - afterWarmup) / afterWarmup;
	// "Noise": RSS of a V8 process moves by some 10 % as the heap grows and shrinks between collections.
	const withinNoise = growth <= 0.1;
	return {
		rows: [
			{
				measure: `n8n RSS growth from ${warmupClaims.toLocaleString('en')} to ${totalClaims.toLocaleString('en')} claims (100 per execution)`,
				value: `${(growth * 100).toFixed(1)} % (${formatMiB(afterWarmup)} → ${formatMiB(end)})`,
				target: '≤ 10 % (noise)',
				met: withinNoise,
			},
		],
		details: [
			`${totalClaims.toLocaleString('en')} claims through real n8n, ${PER_EXECUTION} events per request (Split Out → Idempotency Claim), ${CONCURRENCY} clients;`,
			`${Math.round(claimsPerSecond).toLocaleString('en')} claims/s after warm-up. RSS of the \`n8n start\` process (pid ${pid}), read ${settleMs / 1000} s after each step:`,
			'',
			'| claims so far | RSS |',
			'|---:|---:|',
			...samples.map((s) => `| ${s.claims.toLocaleString('en')} | ${formatMiB(s.rss)} |`),
		].join('\n'),
	};
});
