// One real n8n for all n8n benchmarks (test/support/n8n: the runtime cache, a community-package install
// of `npm pack` output, credentials and workflows imported and published). n8n keeps its own data in a
// schema of the benchmark Postgres, like a production instance with a Postgres database.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Pool } from 'pg';

import { templateCredentials } from '../../harness/n8n/credentials';
import { N8nExecutions } from '../../harness/n8n/executions';
import { N8nInstance } from '../../harness/n8n/instance';
import { runtimePaths } from '../../harness/n8n/runtime';
import {
	REPO_ROOT,
	loadShippedWorkflow,
	tablesSql,
	webhookPathOf,
} from '../../harness/n8n/workflows';
import {
	batchClaimWorkflow,
	claimWithBusinessStepWorkflow,
	claimWorkflow,
	floorWorkflow,
	polledClaimWorkflow,
	polledFloorWorkflow,
	polledRemoveDuplicatesWorkflow,
	removeDuplicatesWorkflow,
	signedClaimWorkflow,
} from './n8nWorkflows';

/** The schema of n8n's own tables in the benchmark Postgres (Remove Duplicates keeps its history there). */
export const N8N_BENCH_SCHEMA = 'n8n_bench';

const benchWorkflows = () => ({
	floor: floorWorkflow(),
	claim: claimWorkflow(),
	signedClaim: signedClaimWorkflow(),
	nodeTemplate: loadShippedWorkflow('idempotency-claim-template.json'),
	builtinTemplate: loadShippedWorkflow('builtin-nodes-template.json'),
	claimOnceTemplate: claimWithBusinessStepWorkflow('bench-claim-once-template', 'bench-claim-once'),
	nodeVsRemoveDuplicates: claimWithBusinessStepWorkflow('bench-node-business', 'bench-node'),
	removeDuplicates: removeDuplicatesWorkflow('bench-remove-duplicates', 'bench-remove-duplicates'),
	batchClaim: batchClaimWorkflow(),
	polledFloor: polledFloorWorkflow(),
	polledClaim: polledClaimWorkflow('bench-polled-claim', 'claim', 'bench_polled_claims'),
	polledCounting: polledClaimWorkflow(
		'bench-polled-counting',
		'counting',
		'bench_polled_counting',
		'counting',
	),
	polledWatermark: polledClaimWorkflow(
		'bench-polled-watermark',
		'watermark',
		'bench_polled',
		'higher',
	),
	polledRemoveDuplicates: polledRemoveDuplicatesWorkflow(),
});
export type BenchWorkflow = keyof ReturnType<typeof benchWorkflows>;

export interface BenchN8n {
	/** Process id of `n8n start`, for reading its RSS. */
	pid: number | null;
	url(workflow: BenchWorkflow): string;
	/** n8n's per-node timings of a workflow's recent executions (null when n8n keeps its data in SQLite). */
	executionTimings:
		((workflow: BenchWorkflow, limit?: number) => ReturnType<N8nExecutions['timings']>) | null;
	description: string;
	stop(): Promise<void>;
}

export async function startN8nForBench({
	pool,
	url,
	quick,
	log,
}: {
	pool: Pool;
	url: string;
	quick: boolean;
	log(message: string): void;
}): Promise<BenchN8n | { skipped: string }> {
	const paths = runtimePaths();
	const installed = [paths.nodeDir, paths.n8nDir].every((dir) =>
		existsSync(join(dir, '.complete')),
	);
	if (!installed && quick) {
		return {
			skipped: `n8n ${paths.version} is not installed in ${paths.root} yet and --quick does not install it (a full run or \`npx tsx test/support/n8n/runtime.ts\` does)`,
		};
	}

	// The templates' tables (processed_events, business_log), and a fresh schema for n8n's own tables.
	await pool.query(tablesSql());
	await pool.query(`DROP SCHEMA IF EXISTS ${N8N_BENCH_SCHEMA} CASCADE`);
	await pool.query(`CREATE SCHEMA ${N8N_BENCH_SCHEMA}`);

	// BENCH_N8N_DATABASE=sqlite keeps n8n's own data in SQLite in its user folder instead (n8n's default).
	const n8nOnSqlite = process.env.BENCH_N8N_DATABASE === 'sqlite';
	const workflows = benchWorkflows();
	const all = Object.values(workflows);
	const instance = await N8nInstance.create({
		packageDir: REPO_ROOT,
		credentials: templateCredentials(url),
		workflows: all,
		publish: all.map((workflow) => workflow.id),
		...(n8nOnSqlite ? {} : { databaseUrl: url, databaseSchema: N8N_BENCH_SCHEMA }),
		env: { N8N_LOG_LEVEL: 'warn' },
		log: (message) => log(`n8n: ${message}`),
	});
	try {
		await instance.start();
	} catch (error) {
		await instance.close().catch(() => undefined);
		throw error;
	}

	const n8nPackage = join(paths.n8nDir, 'node_modules', 'n8n', 'package.json');
	const n8nVersion: string = JSON.parse(readFileSync(n8nPackage, 'utf8')).version;
	const nodeVersion = execFileSync(paths.nodeBin, ['--version'], { encoding: 'utf8' }).trim();
	const executions = n8nOnSqlite ? null : new N8nExecutions(pool, N8N_BENCH_SCHEMA);
	let stopped = false;
	return {
		pid: instance.pid,
		url: (workflow) => instance.webhookUrl(webhookPathOf(workflows[workflow])),
		executionTimings:
			executions && ((workflow, limit) => executions.timings(workflows[workflow].id, limit)),
		description:
			`n8n ${n8nVersion} on Node ${nodeVersion}, package installed from \`npm pack\` as a community package; ` +
			`n8n's database: ${n8nOnSqlite ? 'SQLite (BENCH_N8N_DATABASE=sqlite)' : `Postgres (schema ${N8N_BENCH_SCHEMA} of the same server)`}, default execution saving`,
		stop: async () => {
			if (stopped) return;
			stopped = true;
			await instance.close();
			await pool.query(`DROP SCHEMA IF EXISTS ${N8N_BENCH_SCHEMA} CASCADE`).catch(() => undefined);
		},
	};
}

/** Resident set size of a process in bytes (Linux). */
export function rssOf(pid: number): number {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	const kib = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
	return kib * 1024;
}
