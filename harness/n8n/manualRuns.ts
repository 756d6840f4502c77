// Starting a workflow on demand in a running n8n, as its editor's "Execute workflow" button does: the
// owner signs in (POST /rest/login, the account of owner.ts) and each run is POST
// /rest/workflows/:id/run from a named trigger (the templates' "Run Now" Manual Trigger). Several runs
// can be started at the same moment, and the server keeps running: `n8n execute` would need it stopped
// and boot a whole n8n per run.
import { OWNER } from './owner';

export class N8nManualRuns {
	private constructor(
		private readonly baseUrl: string,
		private readonly cookie: string,
	) {}

	/** Signs in as the owner (n8n must run with ownerEnv()). */
	static async signIn(baseUrl: string): Promise<N8nManualRuns> {
		return new N8nManualRuns(baseUrl, await ownerSessionCookie(baseUrl));
	}

	/** Starts one run of the workflow from `trigger`; resolves with its execution id once n8n has it. */
	async run(workflowId: string, trigger: string): Promise<string> {
		const response = await fetch(`${this.baseUrl}/rest/workflows/${workflowId}/run`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', cookie: this.cookie },
			body: JSON.stringify({ triggerToStartFrom: { name: trigger } }),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`manual run refused: ${response.status} ${text}`);
		const { data } = JSON.parse(text) as { data?: { executionId?: string } };
		if (!data?.executionId) throw new Error(`manual run started no execution: ${text}`);
		return data.executionId;
	}
}

/** The owner's `n8n-auth` cookie, for REST calls as the editor makes them (n8n must run with ownerEnv()). */
export async function ownerSessionCookie(baseUrl: string): Promise<string> {
	const response = await fetch(`${baseUrl}/rest/login`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ emailOrLdapLoginId: OWNER.email, password: OWNER.password }),
	});
	if (!response.ok)
		throw new Error(`n8n sign-in failed: ${response.status} ${await response.text()}`);
	const cookie = response.headers
		.getSetCookie()
		.map((line) => line.split(';')[0])
		.find((pair) => pair.startsWith('n8n-auth='));
	if (!cookie) throw new Error('n8n sign-in answered without an n8n-auth cookie');
	return cookie;
}
