// A real n8n for the browser, started as the e2e suites start theirs (../stack.ts: the packed
// package, the templates' credentials, an app database of its own on the given server, dropped on close),
// with the Idempotency Claim template published and an owner account to sign in with.
import { deliver, type Delivery } from '../webhooks/deliver';
import { startStack } from '../stack';
import { IDEMPOTENCY_CREDENTIAL } from '../n8n/credentials';
import type { Execution } from '../n8n/executions';
import type { N8nInstance } from '../n8n/instance';
import { ownerEnv } from '../n8n/owner';
import { ensureRuntime, type Log } from '../n8n/runtime';
import { loadShippedWorkflow, webhookPathOf, type WorkflowJson } from '../n8n/workflows';

const N8N_SCHEMA = 'n8n_editor';

export interface EditorN8n {
	n8n: N8nInstance;
	/** The Idempotency Claim template as imported (with its n8n id), published. */
	template: WorkflowJson;
	/** The RSS feed template (Key Source Polled Item) as imported, not published. */
	polledTemplate: WorkflowJson;
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
	const template = loadShippedWorkflow('idempotency-claim-template.json');
	const polledTemplate = loadShippedWorkflow('rss-feed-new-items.json');
	const { n8n, executions, close } = await startStack({
		appDatabase: 'idem_editor',
		n8nSchema: N8N_SCHEMA,
		workflows: [template, polledTemplate],
		publish: [template.id],
		postgresUrl: serverUrl,
		env: ownerEnv(await ensureRuntime({ log })),
		log,
	});
	return {
		n8n,
		template,
		polledTemplate,
		credentialName: IDEMPOTENCY_CREDENTIAL.name,
		deliverTwice: async (eventId) => {
			const since = await executions.lastId();
			const url = n8n.webhookUrl(webhookPathOf(template));
			const body = JSON.stringify({ id: eventId, object: 'event', type: 'invoice.paid' });
			const answers: Delivery[] = [];
			for (let attempt = 0; attempt < 2; attempt++) answers.push(await deliver(url, body)); // signed as the template checks
			return { answers, executions: await executions.waitForFinished(template.id, since, 2) };
		},
		close,
	};
}
