// `npm run bench` (full, writes bench/RESULTS.md) and `npm run bench -- --quick` (smoke run for .ci/run,
// writes bench/.out/RESULTS-quick.md). Runs every benchmark in one process against one Postgres so the
// ratios are side by side; exits non-zero only when code breaks or a correctness assertion fails.
// `--only=claimPath,batch,…` runs a subset (development); `--no-n8n` skips the real-n8n parts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { credentialsFromUrl, redact } from '../harness/postgres/connections';
import { startPostgres } from '../harness/postgres/server';
import { benchBatch } from './suites/batch';
import { benchBytesPerKey } from './suites/bytesPerKey';
import type { BenchContext, BenchResult, Benchmark } from './lib/benchmark';
import { benchClaimCost } from './suites/claimCost';
import { benchClaimPath } from './suites/claimPath';
import { benchPooler } from './suites/pooler';
import { benchCleanup } from './suites/cleanup';
import { benchGrowth } from './suites/growth';
import { benchGrowthSettings } from './suites/growthSettings';
import { loadDist } from './lib/dist';
import { describeEnvironment } from './lib/environment';
import { benchMemory } from './suites/memory';
import { benchN8nMemory } from './suites/n8nMemory';
import { startN8nForBench, type BenchN8n } from './lib/benchN8n';
import { benchN8nThroughput } from './suites/n8nThroughput';
import { benchPolledFeed } from './suites/polledFeed';
import { benchRemoveDuplicates } from './suites/removeDuplicates';
import { resultsMarkdown, summaryTable } from './lib/report';

const BENCH_TABLES = [
	'bench_claim_path',
	'bench_batch',
	'bench_claim_cost',
	'bench_cleanup',
	'bench_memory',
	'bench_n8n_claims',
	...['smallest_once', 'compact_once', 'original_once', 'compact_lease', 'original_lease'].map(
		(table) => `bench_bytes_${table}`,
	),
	'bench_polled_business',
	'bench_polled_claims',
	'bench_polled_counting',
	'bench_polled_watermarks',
];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args
	.find((arg) => arg.startsWith('--only='))
	?.slice('--only='.length)
	.split(',');
const skipN8n = args.includes('--no-n8n');
const wanted = (name: string) => !only || only.includes(name);

const log = (message: string) =>
	process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const failures: string[] = [];
const check = (condition: boolean, message: string) => {
	if (!condition && !failures.includes(message)) failures.push(message);
	return condition;
};

// Plain Postgres benchmarks, then the ones in real n8n (they share one n8n instance), then the big table.
type BenchEntry = [name: string, title: string, bench: Benchmark];
const DATABASE_BENCHES: BenchEntry[] = [
	['claimPath', '1. Claim path: node vs raw pg', benchClaimPath],
	['pooler', '1b. Claims through a transaction pooler', benchPooler],
	['batch', '2. Batches of 10,000 items', benchBatch],
	['claimCost', "2b. Where a claim's time goes", benchClaimCost],
	['bytesPerKey', '5a. Bytes per key', benchBytesPerKey],
];
const N8N_BENCHES: BenchEntry[] = [
	['n8nThroughput', '3. Throughput in real n8n', benchN8nThroughput],
	['removeDuplicates', '4. Against Remove Duplicates', benchRemoveDuplicates],
	['polledFeed', '4b. A polled feed: 1,000 items, 990 repeats', benchPolledFeed],
	['n8nMemory', '6b. Memory of the n8n process', benchN8nMemory],
];
const LATE_BENCHES: BenchEntry[] = [
	['cleanup', '5. Cleanup at scale', benchCleanup],
	['growth', '5b. Claims as the table grows', benchGrowth],
	['growthSettings', '5c. Old keys and server settings', benchGrowthSettings],
	['memory', '6a. Memory of a Node process driving the node', benchMemory],
];

async function main(): Promise<void> {
	const startedAt = new Date();
	const dist = loadDist();
	// DATABASE_URL or TEST_DATABASE_URL when set, otherwise a throwaway embedded server.
	const given = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL;
	log(given ? `using the Postgres at ${redact(given)}` : 'starting embedded Postgres…');
	const postgres = await startPostgres(given);
	const pool = new dist.pg.Pool({ connectionString: postgres.url, max: 10 });
	pool.on('error', () => undefined);
	const cleanups: Array<() => Promise<void>> = [async () => pool.end(), postgres.stop];
	let interrupted = false;
	const onSignal = async (signal: NodeJS.Signals) => {
		if (interrupted) return;
		interrupted = true;
		log(`${signal}: stopping what the benchmarks started…`);
		for (const cleanup of [...cleanups].reverse()) await cleanup().catch(() => undefined);
		process.exit(130);
	};
	process.on('SIGINT', onSignal);
	process.on('SIGTERM', onSignal);

	const results: BenchResult[] = [];
	let n8nDescription = 'not used';
	try {
		const environment = await describeEnvironment(pool);
		log(
			`${environment.cpu}, ${environment.cores} cores; Node ${environment.node}; Postgres ${environment.postgres}; commit ${environment.commit}`,
		);
		const context: BenchContext = {
			dist,
			url: postgres.url,
			credentials: credentialsFromUrl(postgres.url),
			pool,
			quick,
			log,
			check,
		};

		const runOne = async ([name, title, bench]: BenchEntry, extra: Partial<BenchContext> = {}) => {
			if (!wanted(name)) return;
			log(`— ${title}`);
			const started = Date.now();
			try {
				results.push({ title, ...(await bench({ ...context, ...extra })) });
			} catch (error) {
				log(`${title} failed: ${(error as Error)?.stack ?? error}`);
				results.push({ title, error: error as Error });
			}
			log(`  (${Math.round((Date.now() - started) / 1000)} s)`);
		};

		for (const entry of DATABASE_BENCHES) await runOne(entry);

		if (N8N_BENCHES.some(([name]) => wanted(name))) {
			const n8n: BenchN8n | { skipped: string } | { error: Error } = skipN8n
				? { skipped: '--no-n8n was given' }
				: await startN8nForBench(context).catch((error: Error) => ({ error }));
			if ('stop' in n8n) {
				cleanups.push(n8n.stop);
				n8nDescription = n8n.description;
				for (const entry of N8N_BENCHES) await runOne(entry, { n8n });
				await n8n.stop();
				cleanups.splice(cleanups.indexOf(n8n.stop), 1);
			} else {
				if ('skipped' in n8n) log(`skipping the n8n benchmarks: ${n8n.skipped}`);
				else log(`n8n did not start: ${n8n.error.stack ?? n8n.error}`);
				n8nDescription =
					'skipped' in n8n ? `skipped: ${n8n.skipped}` : `failed to start: ${n8n.error.message}`;
				// Each n8n benchmark still gets its line in the report, saying why it did not run.
				for (const [name, title] of N8N_BENCHES) if (wanted(name)) results.push({ title, ...n8n });
			}
		}

		for (const entry of LATE_BENCHES) await runOne(entry);

		// Report in section order, whatever order they ran in.
		results.sort((a, b) => a.title.localeCompare(b.title, 'en', { numeric: true }));
		const durationS = Math.round((Date.now() - startedAt.getTime()) / 1000);
		const markdown = resultsMarkdown({
			environment,
			results,
			failures,
			mode: quick ? 'quick' : only ? `subset: ${only.join(', ')}` : 'full',
			startedAt,
			durationS,
			n8n: n8nDescription,
		});
		const target = quick || only ? join(__dirname, '.out') : __dirname;
		mkdirSync(target, { recursive: true });
		const file = join(
			target,
			quick ? 'RESULTS-quick.md' : only ? 'RESULTS-subset.md' : 'RESULTS.md',
		);
		writeFileSync(file, markdown);
		process.stdout.write(`\n${summaryTable(results)}\n\n`);
		log(`wrote ${file} (${durationS} s)`);
	} finally {
		await dist.poolRegistry.closeAllPools().catch(() => undefined);
		// On a server given by DATABASE_URL, leave no benchmark tables behind (the templates' tables stay).
		await pool.query(`DROP TABLE IF EXISTS ${BENCH_TABLES.join(', ')}`).catch(() => undefined);
		for (const cleanup of [...cleanups].reverse()) await cleanup().catch(() => undefined);
	}

	const errors = results.filter((result) => result.error);
	if (failures.length > 0) log(`correctness assertions failed:\n  - ${failures.join('\n  - ')}`);
	if (errors.length > 0)
		log(`${errors.length} benchmark(s) broke: ${errors.map((result) => result.title).join(', ')}`);
	process.exitCode = failures.length > 0 || errors.length > 0 ? 1 : 0;
}

main().catch((error: Error) => {
	log(`benchmarks broke: ${error?.stack ?? error}`);
	process.exitCode = 1;
});
