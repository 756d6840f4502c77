/**
 * The README's install from a clone, as written there: the packed tarball into a clean n8n user folder
 * (`~/.n8n/nodes`, with HOME a new empty folder, so an empty npm cache) with no registry within reach,
 * then n8n loads the package's nodes from it. The package has no runtime dependency: `pg` is in the tarball.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runN8nCli } from '../../harness/n8n/cli';
import { packPackage } from '../../harness/n8n/communityPackage';
import { n8nEnv } from '../../harness/n8n/env';
import { cleanNpmEnv } from '../../harness/n8n/npmEnv';
import { ensureRuntime } from '../../harness/n8n/runtime';
import { withClient } from '../../harness/postgres/connections';
import { startTestPostgres, type PostgresServer } from '../../harness/postgres/server';
import { freePort } from '../../harness/freePort';
import { REPO_ROOT } from '../../harness/repo';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
	version: string;
};
let folder: string;
let postgres: PostgresServer | undefined;

afterAll(async () => {
	await postgres?.stop();
	rmSync(folder, { recursive: true, force: true });
}, 60_000);

/** The README's first shell block under "## Install": the lines after `npm pack`, comments left out. */
function installLines(): string[] {
	const install = readme.slice(readme.indexOf('\n## Install'));
	const block = /```sh\n([\s\S]*?)```/.exec(install)![1].split('\n');
	const packed = block.findIndex((line) => /\bnpm pack\b/.test(line));
	expect(packed).toBeGreaterThanOrEqual(0);
	return block.slice(packed + 1).filter((line) => line.trim() && !line.trim().startsWith('#'));
}

it('installs the packed tarball into a clean ~/.n8n/nodes as the README says, offline, and n8n loads it', async () => {
	const lines = installLines();
	expect(lines.join('\n')).toContain(`n8n-nodes-idempotency-${version}.tgz`);
	folder = mkdtempSync(join(tmpdir(), 'idempotency-install-'));
	const clone = join(folder, 'clone');
	const home = join(folder, 'home');
	// The README's `npm ci && npm run build` ran as `npm run test:e2e`'s build; this is its `npm pack`.
	await packPackage(REPO_ROOT, clone);
	// Nothing listens on that port: any package npm tried to fetch would fail the install.
	const noRegistry = `http://127.0.0.1:${await freePort()}/`;
	const install = spawnSync('bash', ['-euc', lines.join('\n')], {
		cwd: clone,
		// a user's shell: none of `npm run`'s settings
		env: cleanNpmEnv({ HOME: home, npm_config_registry: noRegistry }),
		encoding: 'utf8',
	});
	expect({ status: install.status, stderr: install.stderr }).toMatchObject({ status: 0 });
	const nodes = join(home, '.n8n', 'nodes', 'node_modules');
	// The package alone: no pg beside it, and no n8n-workflow (n8n brings its own).
	expect(readdirSync(nodes).filter((entry) => !entry.startsWith('.'))).toEqual([
		'n8n-nodes-idempotency',
	]);
	const installed = join(nodes, 'n8n-nodes-idempotency', 'dist');

	const runtime = await ensureRuntime();
	// n8n puts its own node_modules, which has a pg of its own, on NODE_PATH, so its node list alone would
	// not tell a missing driver. The installed nodes' require('pg') must find the bundled one, nearer.
	const resolved = spawnSync(runtime.nodeBin, ['-p', "require.resolve('pg')"], {
		cwd: join(installed, 'nodes', 'Idempotency'),
		env: { ...process.env, NODE_PATH: join(runtime.n8nDir, 'node_modules') },
		encoding: 'utf8',
	});
	expect(resolved.stdout.trim()).toBe(join(installed, 'node_modules', 'pg.js'));
	postgres = await startTestPostgres();
	const schema = `install_${process.pid}`;
	await withClient(postgres.url, (client) => client.query(`CREATE SCHEMA ${schema}`));
	try {
		const env = n8nEnv({
			userFolder: home, // n8n's default: the user's home, so ~/.n8n
			port: await freePort(),
			brokerPort: await freePort(),
			databaseUrl: postgres.url,
			databaseSchema: schema,
			n8nMajor: runtime.major,
		});
		const exported = join(folder, 'nodes.json');
		await runN8nCli(runtime, ['export:nodes', `--output=${exported}`], env);
		const names = (JSON.parse(readFileSync(exported, 'utf8')) as Array<{ name: string }>).map(
			(node) => node.name,
		);
		expect(names).toEqual(
			expect.arrayContaining([
				'n8n-nodes-idempotency.idempotencyClaim',
				'n8n-nodes-idempotency.idempotencyKey',
				'n8n-nodes-idempotency.webhookSignature',
			]),
		);
	} finally {
		await withClient(postgres.url, (client) => client.query(`DROP SCHEMA ${schema} CASCADE`));
	}
}, 900_000);
