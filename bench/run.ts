// `npm run bench` (full, writes bench/RESULTS.md) and `npm run bench -- --quick` (smoke run for .ci/run,
// writes bench/.out/RESULTS-quick.md). Runs every benchmark in one process against one Postgres so the
// ratios are side by side; exits non-zero only when code breaks or a correctness assertion fails.
// `--only=claimPath,batch,…` runs a subset (development); `--no-n8n` skips the real-n8n parts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { credentialsFromUrl, redact } from '../harness/postgres/connections';
import { startPostgres } from '../harness/postgres/server';
import type { BenchContext, BenchResult, Suite } from './lib/benchmark';
import { startN8nForBench, type BenchN8n } from './lib/benchN8n';
import { loadDist } from './lib/dist';
import { describeEnvironment } from './lib/environment';
import { resultsMarkdown, summaryTable } from './lib/report';

// Every benchmark, in the order they run: a file bench/suites/<name>.ts that exports its `title` and `run`,
// and its line here. Those on Postgres alone first, then those in real n8n (they share one n8n), then the big tables.
const SUITES = [
	'claimPath',
	'waitForRunningClaim',
	'inbox',
	'inboxOps',
	'completeWithWrite',
	'stepGuard',
	'limits',
	'limitsVsRedis',
	'batch',
	'claimCost',
	'bursts',
	'n8nThroughput',
	'removeDuplicates',
	'polledFeed',
	'idempotentApi',
	'n8nMemory',
	'burstsInN8n',
	'cleanup',
	'growth',
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

async function loadSuites(): Promise<Suite[]> {
	return Promise.all(SUITES.filter(wanted).map((name) => import(`./suites/${name}`)));
}

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

		const suites = await loadSuites();
		const lastInN8n = suites.map(({ run }) => run.inN8n).lastIndexOf(true);
		let n8n: BenchN8n | { skipped: string } | { error: Error } | undefined;
		for (const [index, { title, run }] of suites.entries()) {
			const inN8n = run.inN8n === true;
			if (inN8n && !n8n) {
				n8n = skipN8n
					? { skipped: '--no-n8n was given' }
					: await startN8nForBench(context).catch((error: Error) => ({ error }));
				if ('stop' in n8n) {
					cleanups.push(n8n.stop);
					n8nDescription = n8n.description;
				} else {
					if ('skipped' in n8n) log(`skipping the n8n benchmarks: ${n8n.skipped}`);
					else log(`n8n did not start: ${n8n.error.stack ?? n8n.error}`);
					n8nDescription =
						'skipped' in n8n ? `skipped: ${n8n.skipped}` : `failed to start: ${n8n.error.message}`;
				}
			}
			if (inN8n && n8n && !('stop' in n8n)) {
				// Each n8n benchmark still gets its line in the report, saying why it did not run.
				results.push({ title, ...n8n });
				continue;
			}
			log(`— ${title}`);
			const started = Date.now();
			try {
				const extra = inN8n && n8n && 'stop' in n8n ? { n8n } : {};
				results.push({ title, ...(await run({ ...context, ...extra })) });
			} catch (error) {
				log(`${title} failed: ${(error as Error)?.stack ?? error}`);
				results.push({ title, error: error as Error });
			}
			log(`  (${Math.round((Date.now() - started) / 1000)} s)`);
			if (index === lastInN8n && n8n && 'stop' in n8n) {
				await n8n.stop();
				cleanups.splice(cleanups.indexOf(n8n.stop), 1);
			}
		}

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
		// On a server given by DATABASE_URL, leave no benchmark tables behind (the templates' tables stay).
		await pool
			.query(
				"SELECT string_agg(format('%I', tablename), ', ') AS tables FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'bench\\_%'",
			)
			.then(
				({ rows }) =>
					rows[0].tables && pool.query(`DROP TABLE IF EXISTS ${rows[0].tables} CASCADE`),
			)
			.catch(() => undefined);
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
