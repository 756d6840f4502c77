// One real n8n for all n8n benchmarks, started by the harness's recipe (harness/stack.ts: the tables, a
// community-package install of `npm pack` output, credentials and workflows imported and published) on
// the benchmark Postgres. n8n keeps its own data in a schema there, like a production instance with a
// Postgres database.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { N8nExecutions } from '../../harness/n8n/executions';
import { runtimePaths } from '../../harness/n8n/runtime';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { startStack } from '../../harness/stack';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { benchWorkflows, SMALL_POOL_CONNECTIONS, SMALL_POOL_CREDENTIAL } from './n8nWorkflows';

/** The schema of n8n's own tables in the benchmark Postgres (Remove Duplicates keeps its history there). */
export const N8N_BENCH_SCHEMA = 'n8n_bench';

export type BenchWorkflow = keyof ReturnType<typeof benchWorkflows>;

export interface BenchN8n {
	/** Process id of `n8n start`, for reading its RSS. */
	pid: number | null;
	url(workflow: BenchWorkflow): string;
	workflowId(workflow: BenchWorkflow): string;
	/** n8n's saved executions: per-node timings, node end times (null when n8n keeps its data in SQLite). */
	executions: N8nExecutions | null;
	description: string;
	stop(): Promise<void>;
}

export async function startN8nForBench({
	url,
	quick,
	log,
}: {
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
			skipped: `n8n ${paths.version} is not installed in ${paths.root} yet and --quick does not install it (a full run or \`npx tsx harness/n8n/runtime.ts\` does)`,
		};
	}

	// BENCH_N8N_DATABASE=sqlite keeps n8n's own data in SQLite in its user folder instead (n8n's default).
	const n8nOnSqlite = process.env.BENCH_N8N_DATABASE === 'sqlite';
	const workflows = benchWorkflows();
	const all = Object.values(workflows);
	const stack = await startStack({
		postgresUrl: url,
		n8nSchema: N8N_BENCH_SCHEMA,
		n8nOnSqlite,
		workflows: all,
		publish: all.map((workflow) => workflow.id),
		extraCredentials: [
			{
				...SMALL_POOL_CREDENTIAL,
				data: {
					...credentialsFromUrl(url),
					ssl: 'disable',
					maxConnections: SMALL_POOL_CONNECTIONS,
				},
			},
		],
		env: { N8N_LOG_LEVEL: 'warn' },
		log: (message) => log(`n8n: ${message}`),
	});

	const n8nPackage = join(paths.n8nDir, 'node_modules', 'n8n', 'package.json');
	const n8nVersion: string = JSON.parse(readFileSync(n8nPackage, 'utf8')).version;
	const nodeVersion = execFileSync(paths.nodeBin, ['--version'], { encoding: 'utf8' }).trim();
	const { n8n, executions } = stack;
	let stopped = false;
	return {
		pid: n8n.pid,
		url: (workflow) => n8n.webhookUrl(webhookPathOf(workflows[workflow])),
		workflowId: (workflow) => workflows[workflow].id,
		executions: n8nOnSqlite ? null : executions,
		description:
			`n8n ${n8nVersion} on Node ${nodeVersion}, package installed from \`npm pack\` as a community package; ` +
			`n8n's database: ${n8nOnSqlite ? 'SQLite (BENCH_N8N_DATABASE=sqlite)' : `Postgres (schema ${N8N_BENCH_SCHEMA} of the same server)`}, default execution saving`,
		stop: async () => {
			if (stopped) return;
			stopped = true;
			await stack.close();
		},
	};
}

/** Resident set size of a process in bytes (Linux). */
export function rssOf(pid: number): number {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	const kib = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
	return kib * 1024;
}
