import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';

export const REPO_ROOT = join(__dirname, '..', '..');
const WORKFLOWS_DIR = join(REPO_ROOT, 'workflows');
const FIXTURES_DIR = join(REPO_ROOT, 'test', 'e2e', 'fixtures');

export interface WorkflowNode {
	id?: string;
	name: string;
	type: string;
	typeVersion?: number;
	parameters: Record<string, unknown>;
	disabled?: boolean;
	[field: string]: unknown;
}

export interface WorkflowJson {
	id: string;
	name: string;
	nodes: WorkflowNode[];
	connections: object;
	[field: string]: unknown;
}

/** A shipped workflow file as is, plus an n8n workflow id (the files carry none). */
export function loadShippedWorkflow(file: string): WorkflowJson {
	return loadWorkflowFile(join(WORKFLOWS_DIR, file));
}

/** A workflow the tests alone use (test/e2e/fixtures). */
export function loadFixtureWorkflow(file: string): WorkflowJson {
	return loadWorkflowFile(join(FIXTURES_DIR, file));
}

function loadWorkflowFile(path: string): WorkflowJson {
	const workflow = JSON.parse(readFileSync(path, 'utf8')) as WorkflowJson;
	return { ...workflow, id: newWorkflowId() };
}

/** The workflow with these parameters set on every node whose type ends with `typeSuffix`. */
export function withNodeParameters(
	workflow: WorkflowJson,
	typeSuffix: string,
	parameters: Record<string, unknown>,
): WorkflowJson {
	return {
		...workflow,
		nodes: workflow.nodes.map((node) =>
			node.type.endsWith(typeSuffix)
				? { ...node, parameters: { ...node.parameters, ...parameters } }
				: node,
		),
	};
}

/** The path of a workflow's Webhook node. */
export function webhookPathOf(workflow: WorkflowJson): string {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error(`${workflow.name} has no Webhook node`);
	return String(webhook.parameters.path);
}

/** workflows/processed_events.sql: the claim table and the templates' example business_log. */
export function tablesSql(): string {
	return readFileSync(join(WORKFLOWS_DIR, 'processed_events.sql'), 'utf8');
}

/** How many business_log rows each of these keys has (keys without one are left out). */
export async function businessRowsPerKey(
	db: Pool,
	keys: string[],
): Promise<Record<string, number>> {
	const { rows } = await db.query<{ event_key: string; n: number }>(
		'SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key = ANY($1) GROUP BY event_key',
		[keys],
	);
	return Object.fromEntries(rows.map((row) => [row.event_key, row.n]));
}

/** How many claim rows (processed_events) this key has: 0 or 1. */
export async function claimRows(db: Pool, key: string): Promise<number> {
	const { rowCount } = await db.query('SELECT 1 FROM processed_events WHERE key = $1', [key]);
	return rowCount ?? 0;
}

/** A workflow id in n8n's own format (16 alphanumerics). */
export function newWorkflowId(): string {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	return Array.from(randomBytes(16), (byte) => alphabet[byte % alphabet.length]).join('');
}
