// `npm run dev`: build the package, start Postgres, start a real n8n with the package installed as a
// community package, its credentials created and the templates imported (the Idempotency Claim template
// published), then print the URLs and a curl line to try it. Ctrl-C stops everything this started.
//
// Postgres: DATABASE_URL (or PGHOST/PGDATABASE/…) when set, else a throwaway embedded server.
// n8n keeps its own state in schema n8n_idempotency_dev of that database (fresh each run, dropped on exit),
// and the rest in a temp user folder, deleted on exit. With its database in Postgres, n8n needs no sqlite3,
// whose compile from C took about 6 minutes of a first run on a busy 2-core machine.
import { spawnSync } from 'node:child_process';

import { redact, withClient } from '../test/support/database';
import { templateSignature } from '../test/support/deliver';
import { templateCredentials } from '../test/support/n8n/credentials';
import { N8nInstance } from '../test/support/n8n/instance';
import { OWNER, ownerEnv } from '../test/support/n8n/owner';
import { ensureRuntime } from '../test/support/n8n/runtime';
import { startPostgres } from '../test/support/postgres';
import {
	REPO_ROOT,
	loadShippedWorkflow,
	tablesSql,
	webhookPathOf,
} from '../test/support/workflows';

const N8N_SCHEMA = 'n8n_idempotency_dev';

const log = (message: string) => process.stderr.write(`[dev] ${message}\n`);
const cleanups: Array<() => Promise<void>> = [];
let stopping = false;

async function main(): Promise<void> {
	log('building the package…');
	const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
	if (build.status !== 0) throw new Error('npm run build failed');

	const runtime = await ensureRuntime({ log });

	log('starting Postgres…');
	const postgres = await startPostgres(urlFromEnvironment());
	cleanups.push(() => postgres.stop());
	log(`${postgres.embedded ? 'embedded Postgres at' : 'using'} ${redact(postgres.url)}`);
	await withClient(postgres.url, async (client) => {
		await client.query(tablesSql());
		await client.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA} CASCADE; CREATE SCHEMA ${N8N_SCHEMA}`);
	});
	if (!postgres.embedded)
		cleanups.unshift(() =>
			withClient(postgres.url, (client) =>
				client.query(`DROP SCHEMA IF EXISTS ${N8N_SCHEMA} CASCADE`),
			).then(() => undefined),
		);

	const template = loadShippedWorkflow('idempotency-claim-template.json');
	const n8n = await N8nInstance.create({
		packageDir: REPO_ROOT,
		credentials: templateCredentials(postgres.url),
		workflows: [
			template,
			loadShippedWorkflow('builtin-nodes-template.json'),
			loadShippedWorkflow('cleanup-processed-events.json'),
		],
		publish: [template.id],
		databaseUrl: postgres.url,
		databaseSchema: N8N_SCHEMA,
		env: ownerEnv(runtime),
		log,
	});
	cleanups.unshift(() => n8n.close());
	if (stopping) return;
	await n8n.start();

	const url = n8n.webhookUrl(webhookPathOf(template));
	const body = JSON.stringify({ id: 'evt_dev_1', type: 'invoice.paid' });
	process.stdout.write(
		[
			'',
			`n8n editor:  ${n8n.editorUrl}   (login ${OWNER.email} / ${OWNER.password})`,
			`webhook:     POST ${url}`,
			`postgres:    ${redact(postgres.url)}`,
			`n8n log:     ${n8n.logFile}`,
			'',
			'Send the same signed event twice; the first answer is "processed" (New), the second "duplicate":',
			`  for i in 1 2; do curl -s -X POST '${url}' -H 'content-type: application/json' -H 'x-signature: ${templateSignature(body)['x-signature']}' -d '${body}'; echo; done`,
			'Without the signature (or with a wrong one) the answer is 401 and nothing is claimed.',
			'',
			'Press Ctrl-C to stop n8n and Postgres.',
			'',
		].join('\n'),
	);
	await new Promise(() => {}); // until Ctrl-C
}

/** DATABASE_URL, or a URL made of the PG* variables libpq reads; null when neither is set. */
function urlFromEnvironment(): string | null {
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

async function shutdown(code: number): Promise<void> {
	if (stopping) return;
	stopping = true;
	log('stopping…');
	for (const cleanup of cleanups) {
		await cleanup().catch((error: Error) => log(`cleanup failed: ${error?.message ?? error}`));
	}
	process.exit(code);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
main().catch((error: Error) => {
	log(error?.stack ?? String(error));
	void shutdown(1);
});
