import { NodeConnectionTypes, type INodeProperties, type INodeTypeDescription } from 'n8n-workflow';

import { outputsExpression, type OutputsByOperation } from './descriptions/routedOutputs';

/** What the Burst, Step and Limit nodes' descriptions share (each says literally what n8n's lint rules read). */
type RoutedNodeCommon = Omit<
	INodeTypeDescription,
	'displayName' | 'name' | 'icon' | 'description' | 'defaults' | 'subtitle' | 'usableAsTool'
>;

/** A node on the Idempotency Postgres credential whose operation picks its outputs. */
export function routedNodeDescription(node: {
	properties: INodeProperties[];
	outputs: OutputsByOperation;
}): RoutedNodeCommon {
	return {
		group: ['transform'],
		version: 1,
		inputs: [NodeConnectionTypes.Main],
		outputs: outputsExpression(node.outputs),
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: node.properties,
	};
}
