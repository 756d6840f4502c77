// One real n8n for all n8n benchmarks, started through helper scripts in scripts/n8n/ (runtime cache,
// community-package install of `npm pack` output, credential/workflow import, publish, start). n8n keeps its
// own data in a schema of the benchmark Postgres, like a production instance with a Postgres database.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { executionTimingsReader } from './n8nExecutions.mjs';
import {
	batchClaimWorkflow,
	claimWithBusinessStepWorkflow,
	claimWorkflow,
	floorWorkflow,
	removeDuplicatesWorkflow,
	shippedTemplate,
	webhookPathOf,
} from './n8nWorkflows.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const N8N_SCHEMA = 'n8n_bench';

export async function startN8nForBench({ pool, url, quick, log }) {
	let harness;
	try {
		harness = {
			runtime: await import('../scripts/n8n/runtime.mjs'),
			instance: await import('../scripts/n8n/instance.mjs'),
			credentials: await import('../scripts/n8n/credentials.mjs'),
			pack: await import('../scripts/n8n/community-package.mjs'),
		};
	} catch (error) {
		return { skipped: `the n8n harness in scripts/n8n/ could not be loaded (${error.message})` };
	}
	const paths = harness.runtime.runtimePaths();
	const installed = [paths.nodeDir, paths.n8nDir].every((dir) => existsSync(join(dir, '.complete')));
	if (!installed && quick) {
		return {
			skipped: `n8n ${paths.version} is not installed in ${paths.root} yet and --quick does not install it (a full run or \`node scripts/n8n/runtime.mjs\` does)`,
		};
	}

	// The templates' tables (processed_events, business_log), and a fresh schema for n8n's own tables.
	await pool.query(readFileSync(join(REPO, 'workflows', 'processed_events.sql'), 'utf8'));
	await pool.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA} CASCADE`);
	await pool.query(`CREATE SCHEMA ${N8N_SCHEMA}`);

	// BENCH_N8N_DATABASE=sqlite keeps n8n's own data in SQLite in its user folder instead (n8n's default).
	const n8nOnSqlite = process.env.BENCH_N8N_DATABASE === 'sqlite';
	const nodeTemplate = shippedTemplate('idempotency-claim-template.json');
	const builtinTemplate = shippedTemplate('builtin-nodes-template.json');
	const workflows = {
		floor: floorWorkflow(),
		claim: claimWorkflow(),
		nodeTemplate: nodeTemplate.workflow,
		builtinTemplate: builtinTemplate.workflow,
		nodeVsRemoveDuplicates: claimWithBusinessStepWorkflow('bench-node-business', 'bench-node'),
		removeDuplicates: removeDuplicatesWorkflow('bench-remove-duplicates', 'bench-remove-duplicates'),
		batchClaim: batchClaimWorkflow(),
	};
	const all = Object.values(workflows);

	const packDir = mkdtempSync(join(tmpdir(), 'idempotency-bench-pack-'));
	let instance;
	try {
		log('packing the package (npm pack) for a community-package install…');
		const tarball = await harness.pack.packPackage(REPO, packDir);
		instance = await harness.instance.createN8nInstance({
			tarball,
			credentials: harness.credentials.credentialsFor(url),
			workflows: all,
			publish: all.map((w) => w.id),
			...(n8nOnSqlite ? {} : { databaseUrl: url, databaseSchema: N8N_SCHEMA }),
			env: { N8N_LOG_LEVEL: 'warn' },
			log: (message) => log(`n8n: ${message}`),
		});
		await instance.start();
	} catch (error) {
		await instance?.dispose().catch(() => undefined);
		throw error;
	} finally {
		rmSync(packDir, { recursive: true, force: true });
	}

	const n8nVersion = JSON.parse(readFileSync(join(paths.n8nDir, 'node_modules', 'n8n', 'package.json'), 'utf8')).version;
	const nodeVersion = execFileSync(paths.nodeBin, ['--version'], { encoding: 'utf8' }).trim();
	const readTimings = n8nOnSqlite ? null : executionTimingsReader(pool, N8N_SCHEMA, paths.n8nDir);
	let stopped = false;
	return {
		instance,
		pid: serverPid(instance.userFolder, paths.n8nBin),
		workflows,
		url: (key) => instance.webhookUrl(webhookPathOf(workflows[key])),
		/** Per-node timings of a workflow's recent executions (null when n8n keeps its data in SQLite). */
		executionTimings: readTimings && ((key, limit) => readTimings(workflows[key].id, limit)),
		description:
			`n8n ${n8nVersion} on Node ${nodeVersion}, package installed from \`npm pack\` as a community package; ` +
			`n8n's database: ${n8nOnSqlite ? 'SQLite (BENCH_N8N_DATABASE=sqlite)' : `Postgres (schema ${N8N_SCHEMA} of the same server)`}, default execution saving`,
		stop: async () => {
			if (stopped) return;
			stopped = true;
			await instance.dispose();
			await pool.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA} CASCADE`).catch(() => undefined);
		},
	};
}

/** The `n8n start` process (its cwd is the instance's user folder), for reading its RSS. */
function serverPid(userFolder, n8nBin) {
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
			if (args.includes(n8nBin) && args.includes('start') && readlinkSync(`/proc/${entry}/cwd`) === userFolder)
				return Number(entry);
		} catch {
			// the process ended while we looked
		}
	}
	return null;
}

/** Resident set size of a process in bytes (Linux). */
export function rssOf(pid) {
	const status = readFileSync(`/proc/${pid}/status`, 'utf8');
	const kib = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
	return kib * 1024;
}
