// Memory without n8n: a fresh Node process drives the built node through 100,000 claims and samples its
// RSS and heap after warm-up and at the end (after a forced GC); the pool registry must hold exactly one
// pool for the one credential the whole time.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { Benchmark } from '../lib/benchmark';
import type { MemoryReport } from '../lib/memoryDriver';
import { formatMiB } from '../lib/stats';

const DRIVER = join(__dirname, '..', 'lib', 'memoryDriver.ts');

export const title = '6a. Memory of a Node process driving the node';
export const run: Benchmark = async ({ url, quick, log, check }) => {
	const total = quick ? 20_000 : 100_000;
	const warmup = total / 5;
	const { stdout } = await promisify(execFile)(
		process.execPath,
		['--expose-gc', '--import', 'tsx', DRIVER, url, String(total), String(warmup)],
		{ maxBuffer: 1024 * 1024, timeout: 10 * 60_000 },
	);
	const report = stdout.trim().split('\n').pop()!;
	const { samples, poolCounts, wrong, seconds } = JSON.parse(report) as MemoryReport;
	check(wrong === 0, `memory: ${wrong} executions did not route all fresh keys to New`);
	const onePool = check(
		poolCounts.length === 1 && poolCounts[0] === 1,
		`memory: openPoolCount took the values ${poolCounts.join(', ')}, expected only 1`,
	);
	const first = samples[0];
	const last = samples[samples.length - 1];
	const rssGrowth = (last.rss - first.rss) / first.rss;
	const heapGrowth = last.heapUsed - first.heapUsed;
	log(
		`memory: RSS ${formatMiB(first.rss)} → ${formatMiB(last.rss)}, heap ${formatMiB(first.heapUsed)} → ${formatMiB(last.heapUsed)}, pools ${poolCounts.join(',')}`,
	);
	return {
		rows: [
			{
				measure: `Node process RSS growth from ${warmup.toLocaleString('en')} to ${total.toLocaleString('en')} claims`,
				value: `${(rssGrowth * 100).toFixed(1)} % (heap ${heapGrowth >= 0 ? '+' : ''}${formatMiB(heapGrowth)})`,
				target: '≤ 10 % (noise)',
				met: rssGrowth <= 0.1,
			},
			{
				measure: 'openPoolCount() during and after all claims',
				value: poolCounts.join(', '),
				target: '1 (asserted)',
				met: onePool,
			},
		],
		details: [
			`A fresh \`node --expose-gc\` process (bench/lib/memoryDriver.ts) runs IdempotencyClaim.execute() from dist/ with 100 webhook items per`,
			`execution, 4 executions in flight, ${total.toLocaleString('en')} fresh keys in ${seconds.toFixed(0)} s; samples after a forced GC:`,
			'',
			'| claims so far | RSS | heap used | open pools |',
			'|---:|---:|---:|---:|',
			...samples.map(
				(s) =>
					`| ${s.claims.toLocaleString('en')} | ${formatMiB(s.rss)} | ${formatMiB(s.heapUsed)} | ${s.pools} |`,
			),
		].join('\n'),
	};
};
