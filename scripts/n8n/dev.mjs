#!/usr/bin/env node
// `npm run dev`: build the package, start Postgres, start a real n8n with the package installed as a
// community package, its credentials created and the templates imported (the Idempotency Claim template
// published), then print the URLs and a curl line to try it. Ctrl-C stops everything this started.
//
// Postgres: DATABASE_URL (or PGHOST/PGDATABASE/…) when set, else a throwaway embedded server.
// n8n keeps its own state in SQLite inside a temp user folder, deleted on exit.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import pg from 'pg';
import { credentialsFor } from './credentials.mjs';
import { createN8nInstance } from './instance.mjs';
import { startPostgres } from './postgres.mjs';
import { ensureRuntime } from './runtime.mjs';
import { REPO_ROOT, TEMPLATE_FILES, loadWorkflow, tablesSql, webhookPath } from './workflows.mjs';

const OWNER_EMAIL = 'dev@example.com';
const OWNER_PASSWORD = 'Idempotency-dev-1';

const log = (message) => process.stderr.write(`[dev] ${message}\n`);
const cleanups = [];
let stopping = false;

async function main() {
	log('building the package…');
	const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
	if (build.status !== 0) throw new Error('npm run build failed');

	const runtime = await ensureRuntime({ log });

	log('starting Postgres…');
	const postgres = await startPostgres();
	cleanups.push(() => postgres.stop());
	log(postgres.embedded ? `embedded Postgres at ${redact(postgres.url)}` : `using ${redact(postgres.url)}`);
	await createTables(postgres.url);

	const template = loadWorkflow(TEMPLATE_FILES.claimTemplate);
	const workflows = [template, loadWorkflow(TEMPLATE_FILES.builtinTemplate), loadWorkflow(TEMPLATE_FILES.cleanup)];
	const n8n = await createN8nInstance({
		packageDir: REPO_ROOT,
		credentials: credentialsFor(postgres.url),
		workflows,
		publish: [template.id],
		env: ownerEnv(runtime),
		log,
	});
	cleanups.unshift(() => n8n.dispose());
	if (stopping) return;
	await n8n.start();

	const url = n8n.webhookUrl(webhookPath(template));
	const body = JSON.stringify({ id: 'evt_dev_1', type: 'invoice.paid' });
	process.stdout.write(
		[
			'',
			`n8n editor:  ${n8n.editorUrl}   (login ${OWNER_EMAIL} / ${OWNER_PASSWORD})`,
			`webhook:     POST ${url}`,
			`postgres:    ${redact(postgres.url)}`,
			`n8n log:     ${n8n.logFile}`,
			'',
			'Send the same event twice; the first answer is "processed" (New), the second "duplicate":',
			`  for i in 1 2; do curl -s -X POST '${url}' -H 'content-type: application/json' -d '${body}'; echo; done`,
			'',
			'Press Ctrl-C to stop n8n and Postgres.',
			'',
		].join('\n'),
	);
	await new Promise(() => {}); // until Ctrl-C
}

async function createTables(databaseUrl) {
	const client = new pg.Client({ connectionString: databaseUrl });
	await client.connect();
	try {
		await client.query(tablesSql());
	} finally {
		await client.end();
	}
}

/** An owner account from the environment, so the editor opens without the setup screen. */
function ownerEnv(runtime) {
	const bcrypt = createRequire(join(runtime.n8nDir, 'package.json'))('bcryptjs');
	return {
		N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
		N8N_INSTANCE_OWNER_EMAIL: OWNER_EMAIL,
		N8N_INSTANCE_OWNER_FIRST_NAME: 'Dev',
		N8N_INSTANCE_OWNER_LAST_NAME: 'User',
		N8N_INSTANCE_OWNER_PASSWORD_HASH: bcrypt.hashSync(OWNER_PASSWORD, 10),
	};
}

function redact(databaseUrl) {
	const url = new URL(databaseUrl);
	if (url.password) url.password = '***';
	return url.toString();
}

async function shutdown(code) {
	if (stopping) return;
	stopping = true;
	log('stopping…');
	for (const cleanup of cleanups) {
		await cleanup().catch((error) => log(`cleanup failed: ${error?.message ?? error}`));
	}
	process.exit(code);
}

process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));
main().catch((error) => {
	log(error?.stack ?? String(error));
	shutdown(1);
});
