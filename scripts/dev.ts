// `npm run dev`: build the package, start Postgres, then the stack (harness/stack.ts: the tables, and a real
// n8n with the package installed as a community package, its credentials created and the shipped workflows
// imported, the Idempotency Claim and API templates published), then print the URLs and curl lines to try them.
// `npm run dev -- --help` prints the options (USAGE below).
//
// State is kept between runs in one folder (default <n8n cache>/dev-n8n<major>, or DEV_STATE_DIR): n8n's
// user folder and the embedded Postgres data folder, so workflows, credentials, executions and the claim
// table survive a restart, on the same port and with the same workflow ids. Workflows are imported only
// when their id is missing, so a restart adds no copies.
//
// Nothing outlives it: n8n runs in a process group of its own (so that stopping it reaches its task
// runner), so a signal to this script's group never reaches it; Ctrl-C, SIGTERM and a closed terminal
// (SIGHUP) stop n8n here, and every n8n process checks that this script still runs (endWithParent.cjs)
// and stops when it does not (kill -9); the embedded Postgres has a watchdog for that. npm's pid alone
// gets a signal too (`kill <pid>`): npm runs this script in place of its shell (`exec` in package.json;
// a shell passes no signal on), passes SIGINT and SIGTERM on, and dies of SIGHUP or SIGKILL without a
// word, which this script notices (stopWhenParentIsGone). n8n's pid is kept in the state folder, so a
// leftover that still holds the port is named on the next start.
//
// Postgres: DATABASE_URL (or PGHOST/PGDATABASE/…) when set, checked before anything is built or written,
// else the embedded server. Everything it makes there stays in two schemas: n8n's own tables in
// n8n_idempotency_dev, the workflows' tables in idempotency_dev (the imported workflows name it); --fresh
// drops both. With its database in Postgres, n8n needs no sqlite3, whose compile from C takes minutes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { Client } from 'pg';

import { redact, withClient } from '../harness/postgres/connections';
import { templateSignature } from '../harness/webhooks/deliver';
import { freePort } from '../harness/freePort';
import { OWNER, ownerEnv } from '../harness/n8n/owner';
import { ensureRuntime, runtimePaths } from '../harness/n8n/runtime';
import { startPostgres, type PostgresServer } from '../harness/postgres/server';
import { keptDataDir } from '../harness/postgres/serverUser';
import {
	loadShippedWorkflow,
	newWorkflowId,
	webhookPathOf,
	type WorkflowJson,
} from '../harness/n8n/workflows';
import { REPO_ROOT } from '../harness/repo';
import { startStack } from '../harness/stack';

const USAGE = `Usage: npm run dev [-- options]

Builds this package and starts a real n8n with it on 127.0.0.1, its templates imported and published,
and an embedded Postgres; prints the URLs and curl lines to try it. What you make there is kept between
runs. Ctrl-C (or closing the terminal) stops n8n and Postgres.

  --fresh        delete the kept state first (DEV_FRESH=1)
  --port N       n8n's port, default 5678 (DEV_PORT)
  --no-build     skip \`npm run build\` (dist/ must be built already)
  --help         print this text

  DEV_STATE_DIR  where the state is kept (default <n8n cache>/dev-n8n2)
  DATABASE_URL   an external Postgres instead of the embedded one (or PGHOST, PGDATABASE, …): all it makes
                 there is in schemas n8n_idempotency_dev and idempotency_dev, which --fresh drops
  N8N_VERSION    n8n version (default 2.41.1); N8N_CACHE_DIR: where n8n is installed
`;

/** n8n's own tables, and the workflows' tables: dev writes nothing else in a database. */
const N8N_SCHEMA = 'n8n_idempotency_dev';
const DEV_SCHEMA = 'idempotency_dev';
const DEFAULT_PORT = 5678;
const PID_FILE = 'n8n.pid';
/** Imported on the first start; the first two are published. */
const SHIPPED_WORKFLOWS = [
	'idempotency-claim-template.json',
	'idempotent-api-endpoint.json',
	'builtin-nodes-template.json',
	'cleanup-processed-events.json',
	'stuck-claims-report.json',
];
/** The API template's orders get a table of their own here, so its first order is order_1. */
const ORDERS_SQL = `CREATE TABLE IF NOT EXISTS orders (id bigserial PRIMARY KEY, event_key text NOT NULL,
	event_type text, created_at timestamptz NOT NULL DEFAULT now())`;

const cleanups: Array<() => Promise<void>> = [];
let stopping = false;
// A closed terminal makes writes fail (EIO): that must not stop the shutdown.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
const log = (message: string) => process.stderr.write(`[dev] ${message}\n`);

/** A refusal with a message that says it all (no stack trace printed). */
class DevRefusal extends Error {}

interface DevOptions {
	help: boolean;
	fresh: boolean;
	build: boolean;
	port: number;
	stateDir: string;
}

/** A database named by the environment, and the variables that named it (to unset). */
interface GivenDatabase {
	url: string;
	from: string;
	/** How the printed psql line connects to it. */
	psql: string;
}

function readOptions(argv: string[]): DevOptions {
	const unknown = argv.find(
		(arg, i) =>
			!['--fresh', '--no-build', '--help', '-h', '--port'].includes(arg) &&
			argv[i - 1] !== '--port',
	);
	if (unknown)
		throw new DevRefusal(`unknown option "${unknown}": \`npm run dev -- --help\` lists them`);
	const portArg = argv.indexOf('--port');
	const port = Number(portArg >= 0 ? argv[portArg + 1] : process.env.DEV_PORT || DEFAULT_PORT);
	if (!Number.isInteger(port) || port < 1 || port > 65535)
		throw new DevRefusal(
			`--port / DEV_PORT must be a port number, got "${argv[portArg + 1] ?? process.env.DEV_PORT}"`,
		);
	const runtime = runtimePaths();
	return {
		help: argv.includes('--help') || argv.includes('-h'),
		fresh: argv.includes('--fresh') || process.env.DEV_FRESH === '1',
		build: !argv.includes('--no-build'),
		port,
		stateDir: process.env.DEV_STATE_DIR || join(runtime.root, `dev-n8n${runtime.major}`),
	};
}

async function main(): Promise<void> {
	const options = readOptions(process.argv.slice(2));
	if (options.help) return void process.stdout.write(USAGE);
	const started = Date.now();
	await refuseTakenPort(options.port, options.stateDir);
	const given = databaseFromEnvironment();
	if (given) {
		await checkDatabase(given);
		log(
			`${given.from} is set: using ${redact(given.url)}, not the embedded Postgres (unset ${given.from} ` +
				`to use that). All dev makes there goes into schemas ${N8N_SCHEMA} (n8n) and ${DEV_SCHEMA} ` +
				'(the workflows’ tables), nothing outside them; --fresh drops both.',
		);
	}
	if (options.fresh) {
		log(`--fresh: deleting the dev state in ${options.stateDir}`);
		rmSync(options.stateDir, { recursive: true, force: true });
		const postgresData = postgresDataDir(options.stateDir);
		if (!given && postgresData !== join(options.stateDir, 'postgres'))
			rmSync(dirname(postgresData), { recursive: true, force: true });
	}
	mkdirSync(options.stateDir, { recursive: true });

	if (options.build) {
		log('building the package…');
		const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
		if (build.status !== 0)
			throw new DevRefusal(
				'npm run build failed (above); `--no-build` starts with the dist/ built before',
			);
	}

	const runtime = await ensureRuntime({ log });

	// An external database was named (and checked) in the first line; only the embedded one starts.
	if (!given) log('starting Postgres…');
	const postgres = given
		? await startPostgres(given.url)
		: await startKeptPostgres(options.stateDir);
	cleanups.push(() => postgres.stop());
	if (!given) log(`embedded Postgres at ${redact(postgres.url)}`);
	await withClient(postgres.url, async (client) => {
		if (options.fresh && given) log(`--fresh: dropping schemas ${N8N_SCHEMA} and ${DEV_SCHEMA}`);
		if (options.fresh)
			await client.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA}, ${DEV_SCHEMA} CASCADE`);
		await client.query(`CREATE SCHEMA IF NOT EXISTS ${DEV_SCHEMA}`);
	});

	const workflows = SHIPPED_WORKFLOWS.map(devWorkflow);
	const missing = await missingWorkflows(postgres.url, workflows);
	const [template, api] = workflows;
	if (stopping) return;
	const searchPath = new URL(postgres.url);
	// The stack creates the workflows' tables with this connection: in the dev schema.
	searchPath.searchParams.set('options', `-c search_path=${DEV_SCHEMA}`);
	const { n8n, close } = await startStack({
		postgresUrl: searchPath.toString(),
		appSql: ORDERS_SQL,
		n8nSchema: N8N_SCHEMA,
		keepN8nData: { userFolder: join(options.stateDir, 'n8n') },
		workflows: missing,
		publish: [template, api].filter((workflow) => missing.includes(workflow)).map((w) => w.id),
		port: options.port,
		env: {
			...ownerEnv(runtime),
			NODE_OPTIONS: `--require "${join(REPO_ROOT, 'harness', 'n8n', 'endWithParent.cjs')}"`,
		},
		log,
	});
	const pidFile = join(options.stateDir, PID_FILE);
	cleanups.unshift(async () => {
		await close();
		rmSync(pidFile, { force: true });
	});
	writeFileSync(pidFile, JSON.stringify({ pid: n8n.pid, command: commandOf(n8n.pid!) }));

	const url = n8n.webhookUrl(webhookPathOf(template));
	const apiUrl = n8n.webhookUrl(webhookPathOf(api));
	// New ids on every start, so the lines answer "processed" and a new order the first time on kept state.
	const stamp = Date.now();
	const body = JSON.stringify({ id: `evt_dev_${stamp}`, type: 'invoice.paid' });
	const query = `psql ${given ? given.psql : `'${postgres.url}'`} -c 'SELECT * FROM ${DEV_SCHEMA}.processed_events'`;
	process.stdout.write(
		[
			'',
			`n8n editor:  ${n8n.editorUrl}   (login ${OWNER.email} / ${OWNER.password})`,
			`webhook:     POST ${url}`,
			`api:         POST ${apiUrl}   (Idempotency-Key header)`,
			`postgres:    ${redact(postgres.url)}   (tables in schema ${DEV_SCHEMA}, n8n's in ${N8N_SCHEMA})`,
			`             ${query}`,
			`n8n log:     ${n8n.logFile}`,
			`state:       ${options.stateDir} (kept between runs; \`npm run dev -- --fresh\` starts empty)`,
			`ready in:    ${Math.round((Date.now() - started) / 1000)} s`,
			'',
			'Send a signed event twice; the first answer is "processed" (New), the second "duplicate":',
			`  for i in 1 2; do curl -s -X POST '${url}' -H 'content-type: application/json' -H 'x-signature: ${templateSignature(body)['x-signature']}' -d '${body}'; echo; done`,
			'Without the signature (or with a wrong one) the answer is 401 and nothing is claimed.',
			'',
			'Call the API twice with one Idempotency-Key; both answers are the same 201 with the same orderId:',
			`  for i in 1 2; do curl -s -X POST '${apiUrl}' -H 'content-type: application/json' -H 'Idempotency-Key: dev-order-${stamp}' -d '{"item":"book"}'; echo; done`,
			'',
			'Press Ctrl-C to stop n8n and Postgres.',
			'',
		].join('\n'),
	);
	await new Promise(() => {}); // until Ctrl-C
}

/**
 * A shipped workflow with an id derived from its file name (the same on every run and machine), and its
 * tables in the dev schema: the Idempotency nodes' Schema option, and the schema named in the SQL of
 * the Postgres nodes and of Complete With Write.
 */
function devWorkflow(file: string): WorkflowJson {
	const workflow = loadShippedWorkflow(file);
	const ownTable = (table: string) =>
		`${DEV_SCHEMA}.${table === 'business_log' && file === SHIPPED_WORKFLOWS[1] ? 'orders' : table}`;
	const nodes = workflow.nodes.map(({ parameters, ...node }) => {
		if (node.type.startsWith('n8n-nodes-idempotency.idempotency'))
			parameters = {
				...parameters,
				options: { ...(parameters.options as object), schema: DEV_SCHEMA },
			};
		const writesSql =
			node.type === 'n8n-nodes-base.postgres' || node.type.startsWith('n8n-nodes-idempotency.');
		if (writesSql && typeof parameters.query === 'string')
			parameters = {
				...parameters,
				query: parameters.query.replace(/\b(processed_events|business_log)\b/g, ownTable),
			};
		return { ...node, parameters };
	});
	const id = newWorkflowId(createHash('sha256').update(`dev:${file}`).digest());
	return { ...workflow, nodes, id };
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

/** The embedded server's data: in the state folder, unless its user cannot enter it (as root, under /root). */
const postgresDataDir = (stateDir: string) => keptDataDir(join(stateDir, 'postgres'));

/** The embedded server with its data kept, on the port it had last time when free. */
async function startKeptPostgres(stateDir: string): Promise<PostgresServer> {
	const portFile = join(stateDir, 'postgres.port');
	const lastPort = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0;
	const port = lastPort && (await portIsFree(lastPort)) ? lastPort : await freePort();
	writeFileSync(portFile, String(port));
	const dataDir = postgresDataDir(stateDir);
	if (dataDir !== join(stateDir, 'postgres'))
		log(`Postgres data in ${dataDir}: user postgres, which runs it, cannot enter ${stateDir}`);
	return startPostgres(null, { dataDir, port });
}

/** Refuses to start beside an n8n of an earlier run (its pid file) or on a taken port, naming the holder. */
async function refuseTakenPort(port: number, stateDir: string): Promise<void> {
	let leftover: { pid: number; command: string } | undefined;
	try {
		leftover = JSON.parse(readFileSync(join(stateDir, PID_FILE), 'utf8'));
	} catch {
		// no pid file: no n8n of an earlier run
	}
	if (leftover && commandOf(leftover.pid) === leftover.command)
		throw new DevRefusal(
			`n8n of an earlier \`npm run dev\` is still running (pid ${leftover.pid}: ${leftover.command}): ` +
				`stop it with \`kill ${leftover.pid}\`, then start again`,
		);
	if (await portIsFree(port)) return;
	const lsof = spawnSync('lsof', ['-nP', '-t', `-iTCP:${port}`, '-sTCP:LISTEN'], {
		encoding: 'utf8',
	});
	const holders = (lsof.stdout ?? '').split('\n').filter(Boolean);
	throw new DevRefusal(
		`port ${port} is taken on 127.0.0.1 by ` +
			(holders.length
				? holders.map((pid) => `pid ${pid} (${commandOf(Number(pid))})`).join(', ')
				: `another program (\`lsof -i :${port}\` names it)`) +
			`: stop it, or choose another port with \`npm run dev -- --port ${port + 1}\``,
	);
}

/** The command line of a running process, or null when there is none with that pid. */
function commandOf(pid: number): string | null {
	const ps = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
	return ps.status === 0 ? ps.stdout.trim() : null;
}

function portIsFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/** DATABASE_URL, or a URL made of the PG* variables libpq reads; null when neither is set. */
function databaseFromEnvironment(): GivenDatabase | null {
	const { DATABASE_URL, PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD } = process.env;
	if (DATABASE_URL) return { url: DATABASE_URL, from: 'DATABASE_URL', psql: '"$DATABASE_URL"' };
	if (!PGHOST && !PGDATABASE) return null;
	const url = new URL('postgres://localhost');
	url.hostname = PGHOST || '127.0.0.1';
	url.port = PGPORT || '5432';
	url.pathname = `/${PGDATABASE || 'postgres'}`;
	url.username = PGUSER || 'postgres';
	if (PGPASSWORD) url.password = PGPASSWORD;
	const from = ['PGHOST', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD']
		.filter((name) => process.env[name])
		.join(' ');
	return { url: url.toString(), from, psql: '' };
}

/** Connects once, before anything is built, installed or written: a database that cannot work is one line. */
async function checkDatabase(given: GivenDatabase): Promise<void> {
	let url: URL | undefined;
	const refuse = (why: string) =>
		new DevRefusal(
			`${given.from}${url ? ` (${redact(given.url)})` : ''}: ${why}. Fix it, or unset ${given.from} ` +
				'to use the embedded Postgres',
		);
	try {
		url = new URL(given.url);
	} catch {
		throw refuse('not a URL; the form is postgres://USER:PASSWORD@HOST:PORT/DATABASE');
	}
	if (!/^postgres(ql)?:$/.test(url.protocol)) throw refuse('not a postgres:// URL');
	if (!url.username) throw refuse(`names no user: postgres://USER@${url.host}${url.pathname}`);
	const [user, database] = [url.username, url.pathname.slice(1)].map(decodeURIComponent);
	const where = `${url.hostname}:${url.port || 5432}`;
	const client = new Client({ connectionString: given.url, connectionTimeoutMillis: 10_000 });
	try {
		await client.connect();
		const { rows } = await client.query(
			`SELECT has_database_privilege(current_database(), 'CREATE') AS may`,
		);
		if (!rows[0].may) throw refuse(`user "${user}" may not create schemas in "${database}"`);
	} catch (error) {
		if (error instanceof DevRefusal) throw error;
		const { code, message } = error as { code?: string; message?: string };
		const problems: Record<string, string> = {
			ECONNREFUSED: `nothing answers at ${where} (connection refused)`,
			ENOTFOUND: `no host named ${url.hostname}`,
			'28P01': `the password for user "${user}" is wrong`,
			'3D000': `database "${database}" does not exist on ${where}`,
		};
		throw refuse(problems[code ?? ''] ?? String(message).split('\n')[0]);
	} finally {
		await client.end().catch(() => undefined);
	}
}

async function shutdown(code: number): Promise<void> {
	if (stopping) return;
	stopping = true;
	if (cleanups.length) log('stopping…');
	for (const cleanup of cleanups) {
		await cleanup().catch((error: Error) => log(`cleanup failed: ${error?.message ?? error}`));
	}
	if (cleanups.length) log('stopped');
	process.exit(code);
}

/**
 * Stops when the process that started this one is gone (npm, killed by a signal it does not pass on): an
 * orphan is handed to another parent, so its parent pid changes.
 */
function stopWhenParentIsGone(): void {
	const parent = process.ppid;
	const watch = setInterval(() => {
		if (process.ppid === parent) return;
		clearInterval(watch);
		log(`pid ${parent}, which started dev, is gone`);
		void shutdown(0);
	}, 1000);
	watch.unref(); // the servers' handles keep this process running, not this check
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
	process.on(signal, () => void shutdown(0));
stopWhenParentIsGone();
main().catch((error: Error) => {
	log(error instanceof DevRefusal ? error.message : (error?.stack ?? String(error)));
	void shutdown(1);
});
