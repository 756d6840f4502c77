// A real n8n for the browser: the packed package installed as a community package, the templates'
// credentials and the Idempotency Claim template imported and published, an owner account to sign in
// with, and an app database of its own on the given Postgres server (test/support/appDatabase.ts: the
// templates' tables, n8n's own in a schema of it; dropped on close).
import { Pool } from 'pg';

import { createAppDatabase } from '../appDatabase';
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
	const database = await createAppDatabase(serverUrl, 'idem_editor');
	let n8n: N8nInstance | undefined;
	const pool = new Pool({ connectionString: database.adminUrl, max: 2 });
	try {
		await withClient(database.appUrl, (client) => client.query(tablesSql()));
		await pool.query(`CREATE SCHEMA ${N8N_SCHEMA}`);
		const template = loadShippedWorkflow('idempotency-claim-template.json');
		n8n = await N8nInstance.create({
			packageDir: REPO_ROOT,
			credentials: templateCredentials(database.appUrl),
			workflows: [template],
			publish: [template.id],
			databaseUrl: database.adminUrl,
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
				await database.drop();
			},
		};
	} catch (error) {
		await n8n?.close().catch(() => undefined);
		await pool.end().catch(() => undefined);
		await database.drop().catch(() => undefined);
		throw error;
	}
}
