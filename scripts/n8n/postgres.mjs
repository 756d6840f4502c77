// A Postgres for `npm run dev`: DATABASE_URL (or the PG* variables) when set, else a throwaway embedded
// server from scripts/embedded-postgres.mjs, run as a child process (same approach as
// test/support/postgres.ts, which dev cannot import because it is TypeScript).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const EMBEDDED_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'embedded-postgres.mjs');

/** @returns {Promise<{ url: string, embedded: boolean, stop(): Promise<void> }>} */
export async function startPostgres() {
	const given = urlFromEnvironment();
	if (given) return { url: given, embedded: false, stop: async () => {} };
	return startEmbeddedPostgres();
}

/** A throwaway embedded server; it stops when `stop()` is called or our end of its stdin closes. */
export async function startEmbeddedPostgres() {
	const child = spawn(process.execPath, [EMBEDDED_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
	const url = await new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error('embedded-postgres did not start within 90 s')), 90_000);
		createInterface({ input: child.stdout }).once('line', (line) => {
			clearTimeout(timer);
			resolve(JSON.parse(line).url);
		});
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`embedded-postgres exited with code ${code} before it was ready`));
		});
	});
	const stop = () =>
		child.exitCode !== null
			? Promise.resolve()
			: new Promise((resolve) => {
					child.once('exit', () => resolve());
					child.kill('SIGTERM');
				});
	return { url, embedded: true, stop };
}

function urlFromEnvironment() {
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
