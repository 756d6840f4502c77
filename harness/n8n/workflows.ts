import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../repo';

const WORKFLOWS_DIR = join(REPO_ROOT, 'workflows');
/** Workflows the e2e suites alone use; a fixture may call one of them (subworkflow-template.json does). */
const FIXTURE_WORKFLOWS_DIR = join(REPO_ROOT, 'test', 'e2e', 'fixtures');

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

/** A workflow file as is, with its own id or a new one. */
export function loadWorkflowFile(path: string): WorkflowJson {
	const workflow = JSON.parse(readFileSync(path, 'utf8')) as Partial<WorkflowJson>;
	return { ...workflow, id: workflow.id ?? newWorkflowId() } as WorkflowJson;
}

const EXECUTE_WORKFLOW = 'n8n-nodes-base.executeWorkflow';

/** The ids of the workflows this one calls (Execute Sub-workflow nodes, from the database by id). */
export function calledWorkflowIds(workflow: WorkflowJson): string[] {
	return workflow.nodes
		.filter((node) => node.type === EXECUTE_WORKFLOW && !node.disabled)
		.map((node) => (node.parameters.workflowId as { value?: unknown } | undefined)?.value)
		.filter((id): id is string => typeof id === 'string');
}

/**
 * The workflows and the ids to publish, with every sub-workflow one of them calls (by the id it keeps, from
 * workflows/ or the e2e fixtures) added to both: a suite that loads a template gets the sub-workflow it
 * calls without naming it, and n8n 2.x runs only a published sub-workflow for webhook and scheduled
 * executions.
 */
export function withCalledWorkflows(
	workflows: WorkflowJson[],
	publish: string[],
): { workflows: WorkflowJson[]; publish: string[] } {
	const callable = new Map(
		[WORKFLOWS_DIR, FIXTURE_WORKFLOWS_DIR]
			.flatMap((dir) =>
				readdirSync(dir)
					.filter((file) => file.endsWith('.json'))
					.map((file) => loadWorkflowFile(join(dir, file))),
			)
			.map((workflow) => [workflow.id, workflow]),
	);
	const all = [...workflows];
	const published = [...publish];
	for (let i = 0; i < all.length; i++)
		for (const id of calledWorkflowIds(all[i])) {
			const called = callable.get(id);
			if (!called || all.some((workflow) => workflow.id === id)) continue;
			all.push(called);
			published.push(id);
		}
	return { workflows: all, publish: published };
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

/** The one node of `workflow` that matches; any other count is an error naming the workflow and `what`. */
export function onlyNode(
	workflow: { name: string; nodes: WorkflowNode[] },
	match: (node: WorkflowNode) => boolean,
	what: string,
): WorkflowNode {
	const found = workflow.nodes.filter(match);
	if (found.length !== 1)
		throw new Error(`${workflow.name} has ${found.length} ${what} nodes; expected one`);
	return found[0];
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
