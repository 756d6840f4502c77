import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..', '..');
const WORKFLOWS_DIR = join(REPO_ROOT, 'workflows');

export interface WorkflowJson {
	id: string;
	name: string;
	nodes: Array<{ name: string; type: string; parameters: Record<string, unknown> }>;
	connections: object;
}

/** A shipped workflow file as is, plus an n8n workflow id (the files carry none). */
export function loadShippedWorkflow(file: string): WorkflowJson {
	return loadWorkflowFile(join(WORKFLOWS_DIR, file));
}

/** A workflow the tests alone use (test/e2e/fixtures). */
export function loadFixtureWorkflow(file: string): WorkflowJson {
	return loadWorkflowFile(join(__dirname, '..', 'fixtures', file));
}

function loadWorkflowFile(path: string): WorkflowJson {
	const workflow = JSON.parse(readFileSync(path, 'utf8')) as Omit<WorkflowJson, 'id'>;
	return { ...workflow, id: newWorkflowId() };
}

export function webhookPathOf(workflow: WorkflowJson): string {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error(`${workflow.name} has no Webhook node`);
	return String(webhook.parameters.path);
}

export function tablesSql(): string {
	return readFileSync(join(WORKFLOWS_DIR, 'processed_events.sql'), 'utf8');
}

function newWorkflowId(): string {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	return Array.from(randomBytes(16), (byte) => alphabet[byte % alphabet.length]).join('');
}
