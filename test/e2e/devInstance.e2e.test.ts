/**
 * `npm run dev` as a newcomer meets it. On its embedded Postgres: what was made survives a Ctrl-C and a
 * restart, and every start prints curl lines that answer "processed", then "duplicate" (and a first order
 * order_1); closing its terminal (SIGHUP), `kill` of npm's pid alone (SIGTERM or SIGHUP) or kill -9 leaves
 * no n8n and no Postgres behind, and a leftover n8n of its own is named. On an external DATABASE_URL: a URL that cannot work is refused in one line before anything is
 * built, installed or written; one that works gets nothing outside dev's two schemas, is told so first,
 * and --fresh drops them. `--help` prints the usage.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../../harness/freePort';
import { ownerSessionCookie } from '../../harness/n8n/manualRuns';
import { createAppDatabase, type AppDatabase } from '../../harness/postgres/appDatabase';
import { withClient } from '../../harness/postgres/connections';
import { startPostgres, type PostgresServer } from '../../harness/postgres/server';
import { keptDataDir } from '../../harness/postgres/serverUser';
import { REPO_ROOT } from '../../harness/repo';

const SHIPPED_NAMES_COUNT = 5; // scripts/dev.ts SHIPPED_WORKFLOWS
const DEV_SCHEMAS = ['idempotency_dev', 'n8n_idempotency_dev'];

interface Dev {
	child: ChildProcess;
	output: () => string;
	exited: Promise<number | null>;
}

interface RunningDev extends Dev {
	editorUrl: string;
	/** The printed curl lines: the signed event twice, the API call twice. */
	eventLine: string;
	apiLine: string;
	psqlLine: string;
}

const running = new Set<Dev>();
const folders: string[] = [];

afterAll(async () => {
	for (const dev of running) await stopDev(dev).catch(() => undefined);
	for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}, 120_000);

/** A folder the embedded server (user postgres, when started by root) can traverse; removed at the end. */
function tempFolder(prefix: string): string {
	const folder = mkdtempSync(join(tmpdir(), prefix));
	chmodSync(folder, 0o755);
	folders.push(folder);
	return folder;
}

/**
 * scripts/dev.ts (without its build: the e2e run built the package), in a process group of its own. With
 * `viaNpm` it is typed as a user does, `npm run dev`, and the child is npm.
 */
function spawnDev(args: string[], env: Record<string, string>, { viaNpm = false } = {}): Dev {
	const inherited = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^(DATABASE_URL|PG[A-Z]+|DEV_)/.test(name)),
	);
	const [command, ...commandArgs] = viaNpm
		? ['npm', 'run', 'dev', '--', '--no-build', ...args]
		: [process.execPath, '--import', 'tsx', join('scripts', 'dev.ts'), '--no-build', ...args];
	const child = spawn(command, commandArgs, {
		cwd: REPO_ROOT,
		env: { ...inherited, ...env },
		detached: true, // its own process group, as a terminal's foreground job is
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
	const dev = { child, output: () => output, exited };
	running.add(dev);
	void exited.then(() => running.delete(dev));
	return dev;
}

/** A started dev, once it printed its lines. */
async function startDev(
	args: string[],
	env: Record<string, string>,
	how: { viaNpm?: boolean } = {},
): Promise<RunningDev> {
	const dev = spawnDev(args, env, how);
	const ready = new Promise<void>((resolve) => {
		const poll = setInterval(() => {
			if (!dev.output().includes('Press Ctrl-C')) return;
			clearInterval(poll);
			resolve();
		}, 200);
		void dev.exited.then(() => clearInterval(poll));
	});
	let timer: NodeJS.Timeout | undefined;
	const outcome = await Promise.race([
		ready.then(() => 'ready'),
		dev.exited.then((code) => `exited with code ${code}`),
		new Promise((resolve) => (timer = setTimeout(resolve, 600_000, 'not ready in 10 min'))),
	]);
	clearTimeout(timer);
	if (outcome !== 'ready') throw new Error(`dev ${outcome}:\n${dev.output()}`);
	const line = (pattern: RegExp) => dev.output().match(pattern)![0].trim();
	return {
		...dev,
		editorUrl: /n8n editor:\s+(\S+)/.exec(dev.output())![1],
		eventLine: line(/^ {2}for i in 1 2; do curl .*x-signature.*$/m),
		apiLine: line(/^ {2}for i in 1 2; do curl .*Idempotency-Key.*$/m),
		psqlLine: line(/^\s+psql .*$/m),
	};
}

/** `signal` to the whole process group (SIGINT: Ctrl-C; SIGHUP: the terminal closed); the exit code. */
function stopDev(dev: Dev, signal: NodeJS.Signals = 'SIGINT'): Promise<number | null> {
	if (dev.child.exitCode === null) process.kill(-dev.child.pid!, signal);
	return dev.exited;
}

/** A printed line run in a shell, as pasted: its output lines. */
function paste(line: string, env: Record<string, string> = {}): string[] {
	const run = spawnSync('bash', ['-c', line], {
		encoding: 'utf8',
		env: { ...process.env, ...env },
	});
	expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
	return run.stdout.trim().split('\n');
}

/** The event line's two answers: their status fields. */
function eventAnswers(line: string): string[] {
	return paste(line).map((answer) => (JSON.parse(answer) as { status: string }).status);
}

function isRunning(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${check}`);
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

/** Every process started below `pid` (children, theirs, …), as `ps` lists them now. */
function descendantsOf(pid: number): number[] {
	const ps = spawnSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' });
	const pairs = ps.stdout
		.trim()
		.split('\n')
		.map((line) => line.trim().split(/\s+/).map(Number));
	const found: number[] = [];
	for (let i = -1; i < found.length; i++) {
		const parent = i < 0 ? pid : found[i];
		found.push(...pairs.filter((pair) => pair[1] === parent).map((pair) => pair[0]));
	}
	return found;
}

/** Whether anything accepts a TCP connection on the port (Postgres answers no HTTP request). */
function portListens(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = createConnection({ host: '127.0.0.1', port });
		socket.once('connect', () => {
			socket.destroy();
			resolve(true);
		});
		socket.once('error', () => resolve(false));
	});
}

async function portAnswers(port: number): Promise<boolean> {
	try {
		await fetch(`http://127.0.0.1:${port}/`);
		return true;
	} catch {
		return false;
	}
}

async function workflows(editorUrl: string): Promise<Array<{ id: string; name: string }>> {
	const cookie = await ownerSessionCookie(editorUrl.replace(/\/$/, ''));
	const response = await fetch(`${editorUrl}rest/workflows`, { headers: { cookie } });
	expect(response.status).toBe(200);
	return ((await response.json()) as { data: Array<{ id: string; name: string }> }).data;
}

async function createWorkflow(editorUrl: string, name: string): Promise<string> {
	const cookie = await ownerSessionCookie(editorUrl.replace(/\/$/, ''));
	const response = await fetch(`${editorUrl}rest/workflows`, {
		method: 'POST',
		headers: { cookie, 'content-type': 'application/json' },
		body: JSON.stringify({ name, nodes: [], connections: {}, settings: {} }),
	});
	const text = await response.text();
	expect({ status: response.status, text }).toMatchObject({ status: 200 });
	return (JSON.parse(text) as { data: { id: string } }).data.id;
}

it('--help prints the usage and starts nothing', async () => {
	const dev = spawnDev(['--help'], { DEV_STATE_DIR: join(tmpdir(), 'idempotency-dev-never-made') });
	expect(await dev.exited).toBe(0);
	expect(dev.output()).toMatch(/^Usage: npm run dev/);
	expect(dev.output()).toContain('--no-build');
	expect(dev.output()).not.toContain('[dev]');
	expect(existsSync(join(tmpdir(), 'idempotency-dev-never-made'))).toBe(false);
});

describe('on its embedded Postgres', () => {
	let env: Record<string, string>;
	let port: number;
	let first: RunningDev;
	let second: RunningDev;

	beforeAll(async () => {
		port = await freePort();
		env = { DEV_STATE_DIR: tempFolder('idempotency-dev-state-'), DEV_PORT: String(port) };
	});

	it('keeps workflows, ids, port and claims across a Ctrl-C; every start’s curl lines answer processed, then duplicate', async () => {
		first = await startDev([], env);
		expect(first.editorUrl).toBe(`http://127.0.0.1:${port}/`);
		const shipped = await workflows(first.editorUrl);
		expect(shipped).toHaveLength(SHIPPED_NAMES_COUNT);
		const createdId = await createWorkflow(first.editorUrl, 'Kept between runs');
		expect(eventAnswers(first.eventLine)).toEqual(['processed', 'duplicate']);
		// The API line: one Idempotency-Key twice, the same 201; the first order of an instance is order_1.
		const orders = paste(first.apiLine);
		expect(orders).toEqual([orders[0], orders[0]]);
		expect(JSON.parse(orders[0])).toMatchObject({ orderId: 'order_1' });
		const inPsql = paste(first.psqlLine).join('\n');
		expect(inPsql).toContain(/"id":"(evt_dev_\d+)"/.exec(first.eventLine)![1]);

		expect(await stopDev(first)).toBe(0);
		expect(first.output()).toContain('[dev] stopped');
		const stateDir = env.DEV_STATE_DIR;
		const postgresPort = readFileSync(join(stateDir, 'postgres.port'), 'utf8');

		second = await startDev([], env);
		expect(second.editorUrl).toBe(first.editorUrl);
		expect(readFileSync(join(stateDir, 'postgres.port'), 'utf8')).toBe(postgresPort);
		const kept = await workflows(second.editorUrl);
		expect(kept.map((workflow) => workflow.id).sort()).toEqual(
			[...shipped.map((workflow) => workflow.id), createdId].sort(),
		);
		expect(second.output()).not.toContain('importing workflow');
		expect(eventAnswers(first.eventLine)).toEqual(['duplicate', 'duplicate']); // the claim was kept
		expect(second.eventLine).not.toBe(first.eventLine);
		expect(eventAnswers(second.eventLine)).toEqual(['processed', 'duplicate']);
		const nextOrders = paste(second.apiLine);
		expect(nextOrders).toEqual([nextOrders[0], nextOrders[0]]);
		expect(JSON.parse(nextOrders[0])).toMatchObject({ orderId: 'order_2' });
	}, 1_500_000);

	it('closing its terminal (SIGHUP to its process group) stops n8n and Postgres', async () => {
		const { pid } = JSON.parse(readFileSync(join(env.DEV_STATE_DIR, 'n8n.pid'), 'utf8'));
		expect(isRunning(pid)).toBe(true);
		expect(await stopDev(second, 'SIGHUP')).toBe(0);
		expect(isRunning(pid)).toBe(false);
		expect(await portAnswers(port)).toBe(false);
		expect(existsSync(join(env.DEV_STATE_DIR, 'n8n.pid'))).toBe(false);
		const postgresPort = Number(readFileSync(join(env.DEV_STATE_DIR, 'postgres.port'), 'utf8'));
		await until(async () => !(await portListens(postgresPort)), 10_000);
	}, 120_000);

	// npm passes SIGINT and SIGTERM on to its script, and dies of SIGHUP without passing it on.
	it.each(['SIGTERM', 'SIGHUP'] as const)(
		'`kill -%s` of npm’s pid alone (not its group) stops everything it started: n8n, its task runner, Postgres',
		async (signal) => {
			const dev = await startDev([], env, { viaNpm: true });
			const started = descendantsOf(dev.child.pid!);
			const { pid } = JSON.parse(readFileSync(join(env.DEV_STATE_DIR, 'n8n.pid'), 'utf8'));
			const postgresPort = Number(readFileSync(join(env.DEV_STATE_DIR, 'postgres.port'), 'utf8'));
			const postmasterPid = Number(
				readFileSync(
					join(keptDataDir(join(env.DEV_STATE_DIR, 'postgres')), 'postmaster.pid'),
					'utf8',
				).split('\n')[0],
			);
			expect(started).toEqual(expect.arrayContaining([pid, postmasterPid]));
			expect([await portListens(port), await portListens(postgresPort)]).toEqual([true, true]);

			process.kill(dev.child.pid!, signal);
			await dev.exited;
			// Gone, n8n's group too (its task runner). A generous limit: without the fix they run on for good.
			await until(() => !started.some(isRunning) && !isRunning(-pid), 60_000).catch((error) => {
				process.kill(-dev.child.pid!, 'SIGTERM'); // what npm left in its group stops the rest
				throw error;
			});
			expect(dev.output()).toContain('[dev] stopped'); // cleanly: dev's own shutdown ran
			expect([await portListens(port), await portListens(postgresPort)]).toEqual([false, false]);
			expect(existsSync(join(env.DEV_STATE_DIR, 'n8n.pid'))).toBe(false);
		},
		900_000,
	);

	it('kill -9 leaves no n8n behind; one still there is named on the next start', async () => {
		const third = await startDev([], env);
		const { pid, command } = JSON.parse(readFileSync(join(env.DEV_STATE_DIR, 'n8n.pid'), 'utf8'));
		expect(command).toMatch(/n8n start$/);
		// Frozen, n8n cannot notice that dev is gone: a leftover, as an n8n that hangs would be.
		process.kill(pid, 'SIGSTOP');
		process.kill(third.child.pid!, 'SIGKILL');
		await third.exited;
		// Postgres is stopped by its watchdog, which notices that dev is gone.
		const postgresPort = Number(readFileSync(join(env.DEV_STATE_DIR, 'postgres.port'), 'utf8'));
		await until(async () => !(await portListens(postgresPort)), 30_000);
		const again = spawnDev([], env);
		expect(await again.exited).toBe(1);
		expect(again.output().trim()).toBe(
			`[dev] n8n of an earlier \`npm run dev\` is still running (pid ${pid}: ${command}): ` +
				`stop it with \`kill ${pid}\`, then start again`,
		);
		process.kill(pid, 'SIGCONT'); // it notices now, and stops
		await until(() => !isRunning(pid), 30_000);
		expect(await portAnswers(port)).toBe(false);
	}, 900_000);
});

describe('on an external DATABASE_URL', () => {
	let server: PostgresServer;
	let database: AppDatabase;

	beforeAll(async () => {
		server = await startPostgres(); // it checks passwords
		database = await createAppDatabase(server.url, 'devext');
	}, 120_000);

	afterAll(async () => {
		await database?.drop();
		await server?.stop();
	}, 60_000);

	it('refuses one that cannot work in one line, before building, installing or writing anything', async () => {
		const url = (change: (url: URL) => void) => {
			const changed = new URL(database.appUrl);
			change(changed);
			return changed.toString();
		};
		const unused = await freePort();
		const refusals = {
			[url((u) => (u.port = String(unused)))]: `nothing answers at 127.0.0.1:${unused}`,
			[url((u) => (u.password = 'wrong'))]: `the password for user "${database.role}" is wrong`,
			[url((u) => (u.pathname = '/no_such_database'))]:
				'database "no_such_database" does not exist',
			[url((u) => ((u.username = ''), (u.password = '')))]: 'names no user: postgres://USER@',
		};
		const cacheDir = tempFolder('idempotency-dev-cache-');
		const stateDir = join(cacheDir, 'state');
		const devs = [];
		for (const databaseUrl of Object.keys(refusals))
			devs.push(
				spawnDev([], {
					DATABASE_URL: databaseUrl,
					DEV_STATE_DIR: stateDir,
					DEV_PORT: String(await freePort()), // each its own: all four look at their port at once
					N8N_CACHE_DIR: cacheDir,
				}),
			);
		for (const [index, why] of Object.values(refusals).entries()) {
			const dev = devs[index];
			expect(await dev.exited).toBe(1);
			const lines = dev.output().trim().split('\n');
			expect(lines).toEqual([expect.stringContaining(why)]);
			expect(lines[0]).toMatch(
				/^\[dev\] DATABASE_URL .*Fix it, or unset DATABASE_URL to use the embedded Postgres$/,
			);
		}
		expect(readdirSync(cacheDir)).toEqual([]); // no n8n, no state
	}, 120_000);

	it('gets nothing outside dev’s two schemas, is told so first, and --fresh drops them', async () => {
		const env = {
			DATABASE_URL: database.appUrl,
			DEV_STATE_DIR: tempFolder('idempotency-dev-external-'),
			DEV_PORT: String(await freePort()),
		};
		// Every relation, function, type, extension and schema of the database that is not in dev's schemas.
		const outside = () =>
			withClient(database.adminUrl, async (client) => {
				const { rows } = await client.query<{ name: string }>(
					`SELECT name FROM (
					   SELECT n.nspname || '.' || c.relname AS name, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
					   UNION ALL SELECT n.nspname || '.' || p.proname || '()', n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
					   UNION ALL SELECT n.nspname || '.' || t.typname, n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
					   UNION ALL SELECT 'extension ' || e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
					   UNION ALL SELECT 'schema ' || nspname, CASE nspname WHEN 'public' THEN 'pg_catalog' ELSE nspname END FROM pg_namespace
					 ) objects
					 WHERE nspname <> ALL($1) AND nspname NOT IN ('pg_catalog', 'information_schema') AND nspname !~ '^pg_(toast|temp)'`,
					[DEV_SCHEMAS],
				);
				return rows.map((row) => row.name);
			});
		expect(await outside()).toEqual([]); // a new database: nothing to begin with

		const first = await startDev([], env);
		// The first line says which database it uses; no line says it starts a Postgres of its own.
		expect(first.output().indexOf('[dev] DATABASE_URL is set: using')).toBe(0);
		expect(first.output()).not.toMatch(/starting Postgres|embedded Postgres at/);
		expect(first.output()).toContain('schemas n8n_idempotency_dev (n8n) and idempotency_dev');
		expect(first.output()).not.toContain(new URL(database.appUrl).password);
		expect(eventAnswers(first.eventLine)).toEqual(['processed', 'duplicate']);
		expect(JSON.parse(paste(first.apiLine)[0])).toMatchObject({ orderId: 'order_1' });
		expect(first.psqlLine).toBe(
			`psql "$DATABASE_URL" -c 'SELECT * FROM idempotency_dev.processed_events'`,
		);
		expect(paste(first.psqlLine, { DATABASE_URL: database.appUrl }).join('\n')).toContain(
			/"id":"(evt_dev_\d+)"/.exec(first.eventLine)![1],
		);
		expect(await outside()).toEqual([]);
		expect(await stopDev(first)).toBe(0);

		const fresh = await startDev(['--fresh'], env);
		expect(fresh.output()).toContain(
			'[dev] --fresh: dropping schemas n8n_idempotency_dev and idempotency_dev',
		);
		expect(await workflows(fresh.editorUrl)).toHaveLength(SHIPPED_NAMES_COUNT);
		expect(eventAnswers(first.eventLine)).toEqual(['processed', 'duplicate']); // its claim was dropped
		expect(await outside()).toEqual([]);
		expect(await stopDev(fresh)).toBe(0);
	}, 1_500_000);
});
