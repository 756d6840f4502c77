// Reads the bundled workflow templates from workflows/ and gives each a fresh n8n workflow id (the exported
// files carry none, so importing them twice never overwrites a user's copy).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newWorkflowId } from './instance.mjs';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WORKFLOWS_DIR = join(REPO_ROOT, 'workflows');

export const TEMPLATE_FILES = {
	claimTemplate: 'idempotency-claim-template.json',
	builtinTemplate: 'builtin-nodes-template.json',
	cleanup: 'cleanup-processed-events.json',
};

export function loadWorkflow(file) {
	const workflow = JSON.parse(readFileSync(join(WORKFLOWS_DIR, file), 'utf8'));
	return { ...workflow, id: newWorkflowId() };
}

/** The POST path of a workflow's Webhook node. */
export function webhookPath(workflow) {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error(`workflow "${workflow.name}" has no Webhook node`);
	return webhook.parameters.path;
}

export function tablesSql() {
	return readFileSync(join(WORKFLOWS_DIR, 'processed_events.sql'), 'utf8');
}
