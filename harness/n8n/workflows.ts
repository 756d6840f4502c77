import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../repo';

const WORKFLOWS_DIR = join(REPO_ROOT, 'workflows');

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

/** A workflow file as is, plus an n8n workflow id. */
export function loadWorkflowFile(path: string): WorkflowJson {
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

/** A workflow id in n8n's own format (16 alphanumerics), random or made of the given bytes. */
export function newWorkflowId(bytes: Uint8Array = randomBytes(16)): string {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	return Array.from(bytes.subarray(0, 16), (byte) => alphabet[byte % alphabet.length]).join('');
}
