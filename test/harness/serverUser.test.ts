/**
 * As root, our Postgres runs as user postgres, which cannot enter a folder only root may enter: a clone in
 * /root (mode 0700) held binaries it could not run, so `npm test` failed before its first test, and
 * `npm run dev` kept its data under ~/.cache, where initdb could not write. Both are tried here for real,
 * in a folder of mode 0700: a copy of the harness there starts its own server, and a kept server whose
 * folder is there starts, keeps its data across a restart, and keeps it where user postgres can reach it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { freePort } from '../../harness/freePort';
import { withClient } from '../../harness/postgres/connections';
import { REPO_ROOT } from '../../harness/repo';
import { OwnPostgres } from '../../harness/postgres/server';
import { keptDataDir } from '../../harness/postgres/serverUser';

const asRoot = process.getuid?.() === 0 ? it : it.skip;

let rootOnly: string;
beforeAll(() => {
	rootOnly = mkdtempSync(join(tmpdir(), 'root-only-')); // mode 0700, as /root
});
afterAll(() => rmSync(rootOnly, { recursive: true, force: true }));

const query = (url: string, sql: string) =>
	withClient(url, async (client) => (await client.query(sql)).rows);

asRoot(
	'a checkout in a folder only root may enter starts its own Postgres (the binaries are run from a copy)',
	() => {
		expect(statSync(rootOnly).mode & 0o777).toBe(0o700);
		const checkout = join(rootOnly, 'checkout');
		for (const part of ['harness', 'package.json', 'tsconfig.json'])
			cpSync(join(REPO_ROOT, part), join(checkout, part), { recursive: true });
		symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'));
		const started = spawnSync(
			join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
			[
				'-e',
				"import { OwnPostgres } from './harness/postgres/server';" +
					"import { withClient } from './harness/postgres/connections';" +
					'OwnPostgres.start().then(async (server) => {' +
					"await withClient(server.url, async (client) => console.log((await client.query('SELECT 40 + 2 AS answer')).rows[0].answer));" +
					'await server.stop(); });',
			],
			{ cwd: checkout, encoding: 'utf8', timeout: 120_000 },
		);
		expect({ status: started.status, stderr: started.stderr }).toEqual({ status: 0, stderr: '' });
		expect(started.stdout.trim()).toBe('42');
	},
	150_000,
);

asRoot(
	'a kept server whose folder only root may enter starts, and keeps its data across a restart',
	async () => {
		const asked = join(rootOnly, 'state', 'postgres');
		const kept = { dataDir: asked, port: await freePort() };
		const used = keptDataDir(asked);
		try {
			expect(used).not.toBe(asked);
			let server = await OwnPostgres.start({ kept });
			try {
				await query(server.url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
			} finally {
				await server.stop();
			}
			server = await OwnPostgres.start({ kept });
			try {
				expect(await query(server.url, 'SELECT n FROM kept')).toEqual([{ n: 7 }]);
			} finally {
				await server.stop();
			}
			expect(existsSync(join(used, 'PG_VERSION'))).toBe(true);
			expect(existsSync(asked)).toBe(false);
		} finally {
			rmSync(dirname(used), { recursive: true, force: true });
		}
	},
	120_000,
);
