// `npm run dev`: build the package, start Postgres, then the stack (harness/stack.ts: the tables, and a real
// n8n with the package installed as a community package, its credentials created and the shipped workflows
// imported, the Idempotency Claim and API templates published), then print the URLs and curl lines to try them.
// Ctrl-C stops everything this started.
//
// State is kept between runs in one folder (default <n8n cache>/dev-n8n<major>, or DEV_STATE_DIR): n8n's
// user folder and the embedded Postgres data folder, so workflows, credentials, executions and the claim
// table survive a restart, on the same port (5678, or --port / DEV_PORT) and with the same workflow ids.
// `--fresh` (or DEV_FRESH=1) deletes that state first. Workflows are imported only when their id is
// missing, so a restart adds no copies.
//
// Postgres: DATABASE_URL (or PGHOST/PGDATABASE/…) when set, else the embedded server. n8n keeps its own
// tables in schema n8n_idempotency_dev of that database (dropped by --fresh). With its database in
// Postgres, n8n needs no sqlite3, whose compile from C took about 6 minutes of a first run.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { redact, withClient } from '../harness/postgres/connections';
import { templateSignature } from '../harness/webhooks/deliver';
import { freePort } from '../harness/freePort';
import { OWNER, ownerEnv } from '../harness/n8n/owner';
import { ensureRuntime, runtimePaths } from '../harness/n8n/runtime';
import {
	startEmbeddedPostgres,
	startPostgres,
	type PostgresServer,
} from '../harness/postgres/server';
import {
	loadShippedWorkflow,
	newWorkflowId,
	webhookPathOf,
	type WorkflowJson,
} from '../harness/n8n/workflows';
import { REPO_ROOT } from '../harness/repo';
import { startStack } from '../harness/stack';

const N8N_SCHEMA = 'n8n_idempotency_dev';
const DEFAULT_PORT = 5678;
/** Imported on the first start; the first two are published. */
const SHIPPED_WORKFLOWS = [
	'idempotency-claim-template.json',
	'idempotent-api-endpoint.json',
	'builtin-nodes-template.json',
	'cleanup-processed-events.json',
	'stuck-claims-report.json',
];

const log = (message: string) => process.stderr.write(`[dev] ${message}\n`);
const cleanups: Array<() => Promise<void>> = [];
let stopping = false;

/** A refusal with a message that says it all (no stack trace printed). */
class DevRefusal extends Error {}

interface DevOptions {
	fresh: boolean;
	build: boolean;
	port: number;
	stateDir: string;
}

function readOptions(argv: string[]): DevOptions {
	const portArg = argv.indexOf('--port');
	const port = Number(portArg >= 0 ? argv[portArg + 1] : process.env.DEV_PORT || DEFAULT_PORT);
	if (!Number.isInteger(port) || port < 1 || port > 65535)
		throw new DevRefusal(
			`--port / DEV_PORT must be a port number, got "${argv[portArg + 1] ?? process.env.DEV_PORT}"`,
		);
	const runtime = runtimePaths();
	return {
		fresh: argv.includes('--fresh') || process.env.DEV_FRESH === '1',
		build: !argv.includes('--no-build'),
		port,
		stateDir: process.env.DEV_STATE_DIR || join(runtime.root, `dev-n8n${runtime.major}`),
	};
}

async function main(): Promise<void> {
	const options = readOptions(process.argv.slice(2));
	const started = Date.now();
	if (!(await portIsFree(options.port)))
		throw new DevRefusal(
			`port ${options.port} is taken on 127.0.0.1 (another n8n?): stop it, or choose another port ` +
				'with `npm run dev -- --port 5679` (or DEV_PORT=5679)',
		);
	const givenUrl = urlFromEnvironment();
	if (options.fresh) {
		log(`--fresh: deleting the dev state in ${options.stateDir}`);
		rmSync(options.stateDir, { recursive: true, force: true });
	}
	mkdirSync(options.stateDir, { recursive: true });

	if (options.build) {
		log('building the package…');
		const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
		if (build.status !== 0) throw new Error('npm run build failed');
	}

	const runtime = await ensureRuntime({ log });

	log('starting Postgres…');
	const postgres = givenUrl
		? await startPostgres(givenUrl)
		: await startKeptPostgres(options.stateDir);
	cleanups.push(() => postgres.stop());
	log(`${postgres.embedded ? 'embedded Postgres at' : 'using'} ${redact(postgres.url)}`);
	if (options.fresh)
		await withClient(postgres.url, (client) =>
			client.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA} CASCADE`),
		);

	const workflows = SHIPPED_WORKFLOWS.map(devWorkflow);
	const missing = await missingWorkflows(postgres.url, workflows);
	const [template, api] = workflows;
	if (stopping) return;
	const { n8n, close } = await startStack({
		postgresUrl: postgres.url,
		n8nSchema: N8N_SCHEMA,
		keepN8nData: { userFolder: join(options.stateDir, 'n8n') },
		workflows: missing,
		publish: [template, api].filter((workflow) => missing.includes(workflow)).map((w) => w.id),
		port: options.port,
		env: ownerEnv(runtime),
		log,
	});
	cleanups.unshift(close);

	const url = n8n.webhookUrl(webhookPathOf(template));
	const apiUrl = n8n.webhookUrl(webhookPathOf(api));
	const body = JSON.stringify({ id: 'evt_dev_1', type: 'invoice.paid' });
	// The embedded server is local and throwaway-grade: its URL is printed whole, to paste into psql.
	const databaseUrl = postgres.embedded ? postgres.url : redact(postgres.url);
	process.stdout.write(
		[
			'',
			`n8n editor:  ${n8n.editorUrl}   (login ${OWNER.email} / ${OWNER.password})`,
			`webhook:     POST ${url}`,
			`api:         POST ${apiUrl}   (Idempotency-Key header)`,
			`postgres:    ${databaseUrl}`,
			`             psql '${databaseUrl}' -c 'SELECT * FROM processed_events'`,
			`n8n log:     ${n8n.logFile}`,
			`state:       ${options.stateDir} (kept between runs; \`npm run dev -- --fresh\` starts empty)`,
			`ready in:    ${Math.round((Date.now() - started) / 1000)} s`,
			'',
			'Send the same signed event twice; the first answer is "processed" (New), the second "duplicate":',
			`  for i in 1 2; do curl -s -X POST '${url}' -H 'content-type: application/json' -H 'x-signature: ${templateSignature(body)['x-signature']}' -d '${body}'; echo; done`,
			'Without the signature (or with a wrong one) the answer is 401 and nothing is claimed.',
			'',
			'Call the API twice with one Idempotency-Key; both answers are the same 201 with the same orderId:',
			`  for i in 1 2; do curl -s -X POST '${apiUrl}' -H 'content-type: application/json' -H 'Idempotency-Key: dev-order-1' -d '{"item":"book"}'; echo; done`,
			'',
			'Press Ctrl-C to stop n8n and Postgres.',
			'',
		].join('\n'),
	);
	await new Promise(() => {}); // until Ctrl-C
}

/** A shipped workflow with an id derived from its file name: the same id on every run and machine. */
function devWorkflow(file: string): WorkflowJson {
	const id = newWorkflowId(createHash('sha256').update(`dev:${file}`).digest());
	return { ...loadShippedWorkflow(file), id };
}

/** The workflows whose id n8n's database does not have yet (all of them before n8n's first start). */
async function missingWorkflows(url: string, workflows: WorkflowJson[]): Promise<WorkflowJson[]> {
	const present = await withClient(url, async (client) => {
		const { rows } = await client.query<{ exists: string | null }>(
			'SELECT to_regclass($1) AS exists',
			[`${N8N_SCHEMA}.workflow_entity`],
		);
		if (!rows[0].exists) return new Set<string>();
		const { rows: found } = await client.query<{ id: string }>(
			`SELECT id FROM ${N8N_SCHEMA}.workflow_entity WHERE id = ANY($1)`,
			[workflows.map((workflow) => workflow.id)],
		);
		return new Set(found.map((row) => row.id));
	});
	return workflows.filter((workflow) => !present.has(workflow.id));
}

/** The embedded server with its data in the state folder, on the port it had last time when free. */
async function startKeptPostgres(stateDir: string): Promise<PostgresServer> {
	const portFile = join(stateDir, 'postgres.port');
	const lastPort = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0;
	const port = lastPort && (await portIsFree(lastPort)) ? lastPort : await freePort();
	writeFileSync(portFile, String(port));
	return startEmbeddedPostgres({ dataDir: join(stateDir, 'postgres'), port });
}

function portIsFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/** DATABASE_URL, or a URL made of the PG* variables libpq reads; null when neither is set. */
function urlFromEnvironment(): string | null {
	if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
	const { PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD } = process.env;
	if (!PGHOST && !PGDATABASE) return null;
	const url = new URL('postgres://localhost');
	url.hostname = PGHOST || '127.0.0.1';
	url.port = PGPORT || '5432';
	url.pathname = `/${PGDATABASE || 'postgres'}`;
	url.username = PGUSER || 'postgres';
	if (PGPASSWORD) url.password = PGPASSWORD;
	return url.toString();
}

async function shutdown(code: number): Promise<void> {
	if (stopping) return;
	stopping = true;
	log('stopping…');
	for (const cleanup of cleanups) {
		await cleanup().catch((error: Error) => log(`cleanup failed: ${error?.message ?? error}`));
	}
	log('stopped');
	process.exit(code);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
main().catch((error: Error) => {
	log(error instanceof DevRefusal ? error.message : (error?.stack ?? String(error)));
	void shutdown(1);
});
