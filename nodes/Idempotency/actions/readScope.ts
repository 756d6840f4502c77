import type { IExecuteFunctions } from 'n8n-workflow';

/** Whether the claim node keys polled items (Key Source "Polled Item"). */
export function isPolledItem(context: IExecuteFunctions): boolean {
	return context.getNodeParameter('keySource', 0, 'auto') === 'polled';
}

/**
 * The item's Scope option. Empty, a polled item gets this node's own history, `<workflow id>/<node id>`:
 * Remove Duplicates' default (Scope Node), and what `{{ $workflow.id }}/{{ $nodeId }}` gives. A webhook
 * key keeps no prefix, as before.
 */
export function readScope(context: IExecuteFunctions, index: number): string {
	const scope = String(context.getNodeParameter('options.scope', index, '') ?? '');
	if (scope !== '' || !isPolledItem(context)) return scope;
	const workflowId = context.getWorkflow().id;
	if (!workflowId)
		throw new Error('a polled item without a Scope is kept per node: save the workflow first');
	return `${workflowId}/${context.getNode().id}`;
}
