// A real n8n for the browser: the packed package installed as a community package, the templates'
// credentials and the Idempotency Claim template imported and published, an owner account to sign in
// with, and n8n's own tables in a database of their own on the given Postgres server (dropped on close).
import { randomBytes } from 'node:crypto';

import { Pool } from 'pg';

import { withClient } from '../database';
import { deliver, type Delivery } from '../deliver';
import { IDEMPOTENCY_CREDENTIAL, templateCredentials } from '../n8n/credentials';
import { N8nExecutions, type Execution } from '../n8n/executions';
import { N8nInstance } from '../n8n/instance';
import { ownerEnv } from '../n8n/owner';
import { ensureRuntime, type Log } from '../n8n/runtime';
import {
	REPO_ROOT,
	loadShippedWorkflow,
	tablesSql,
	webhookPathOf,
	type WorkflowJson,
} from '../workflows';

const N8N_SCHEMA = 'n8n_editor';

export interface EditorN8n {
	n8n: N8nInstance;
	/** The Idempotency Claim template as imported (with its n8n id), published. */
	template: WorkflowJson;
	/** The name of this package's credential, as the editor lists it. */
	credentialName: string;
	/**
	 * Delivers one signed event twice to the template's webhook, as a provider's retry would, and returns both
	 * answers and both finished executions (the first goes down New, the second down Duplicate).
	 */
	deliverTwice(eventId: string): Promise<{ answers: Delivery[]; executions: Execution[] }>;
	close(): Promise<void>;
}

export async function startEditorN8n(serverUrl: string, log?: Log): Promise<EditorN8n> {
	const databaseName = `idem_editor_${randomBytes(4).toString('hex')}`;
	await withClient(serverUrl, (admin) => admin.query(`CREATE DATABASE ${databaseName}`));
	const url = new URL(serverUrl);
	url.pathname = `/${databaseName}`;
	const databaseUrl = url.toString();
	const dropDatabase = () =>
		withClient(serverUrl, (admin) =>
			admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`),
		).then(() => undefined);

	let n8n: N8nInstance | undefined;
	const pool = new Pool({ connectionString: databaseUrl, max: 2 });
	try {
		await withClient(databaseUrl, async (client) => {
			await client.query(tablesSql());
			await client.query(`CREATE SCHEMA ${N8N_SCHEMA}`);
		});
		const template = loadShippedWorkflow('idempotency-claim-template.json');
		n8n = await N8nInstance.create({
			packageDir: REPO_ROOT,
			credentials: templateCredentials(databaseUrl),
			workflows: [template],
			publish: [template.id],
			databaseUrl,
			databaseSchema: N8N_SCHEMA,
			env: ownerEnv(await ensureRuntime({ log })),
			log,
		});
		await n8n.start();
		const started = n8n;
		const executions = new N8nExecutions(pool, N8N_SCHEMA);
		return {
			n8n: started,
			template,
			credentialName: IDEMPOTENCY_CREDENTIAL.name,
			deliverTwice: async (eventId) => {
				const since = await executions.lastId();
				const url = started.webhookUrl(webhookPathOf(template));
				const body = JSON.stringify({ id: eventId, object: 'event', type: 'invoice.paid' });
				const answers: Delivery[] = [];
				for (let attempt = 0; attempt < 2; attempt++) answers.push(await deliver(url, body)); // signed as the template checks
				return { answers, executions: await executions.waitForFinished(template.id, since, 2) };
			},
			close: async () => {
				await started.close();
				await pool.end();
				await dropDatabase();
			},
		};
	} catch (error) {
		await n8n?.close().catch(() => undefined);
		await pool.end().catch(() => undefined);
		await dropDatabase().catch(() => undefined);
		throw error;
	}
}
