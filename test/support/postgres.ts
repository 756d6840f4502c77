import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface TestPostgres {
	url: string;
	stop(): Promise<void>;
}

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'embedded-postgres.mjs');

/** TEST_DATABASE_URL when set; otherwise a fresh embedded PostgreSQL in a child process. */
export async function startTestPostgres(): Promise<TestPostgres> {
	const given = process.env.TEST_DATABASE_URL;
	if (given) return { url: given, stop: async () => {} };
	return startEmbeddedPostgres();
}

export async function startEmbeddedPostgres(): Promise<TestPostgres> {
	const child = spawn(process.execPath, [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
	const url = await readUrl(child);
	return { url, stop: () => stopChild(child) };
}

function readUrl(child: ChildProcess): Promise<string> {
	return new Promise((resolve, reject) => {
		const lines = createInterface({ input: child.stdout! });
		const timer = setTimeout(() => reject(new Error('embedded-postgres did not start within 60 s')), 60_000);
		lines.once('line', (line) => {
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
