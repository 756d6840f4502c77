/**
 * The line under each node's name on the canvas, evaluated the way n8n's editor evaluates a subtitle
 * (n8n-workflow's own Workflow and expression engine, on the node's parameters with their defaults):
 * it names the chosen option as the panel lists it (Retry Later), never its internal value (retryLater).
 */
import {
	NodeHelpers,
	Workflow,
	type INode,
	type INodePropertyOptions,
	type INodeType,
	type INodeTypes,
} from 'n8n-workflow';

import { IdempotencyBurst } from '../../nodes/Idempotency/IdempotencyBurst.node';
import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { IdempotencyLimit } from '../../nodes/Idempotency/IdempotencyLimit.node';
import { WebhookSignature } from '../../nodes/WebhookSignature/WebhookSignature.node';

/** The subtitle the editor shows for a node of this type with these parameter values. */
function subtitleOf(type: INodeType, values: Record<string, string>): unknown {
	const { description } = type;
	const nodeTypes = {
		getByName: () => type,
		getByNameAndVersion: () => type,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;
	const parameters = NodeHelpers.getNodeParameters(
		description.properties,
		values,
		true,
		false,
		{ typeVersion: 1 },
		description,
	)!;
	const node: INode = {
		id: 'n1',
		name: description.defaults.name as string,
		type: `n8n-nodes-idempotency.${description.name}`,
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	return workflow.expression.getSimpleParameterValue(node, description.subtitle, 'internal', {});
}

/** Each node of ours, and the options parameter its subtitle names. */
const NODES: [node: string, type: INodeType, parameter: string][] = [
	['Idempotency Claim', new IdempotencyClaim(), 'claimMode'],
	['Idempotency Key', new IdempotencyKey(), 'operation'],
	['Idempotency Burst', new IdempotencyBurst(), 'operation'],
	['Idempotency Limit', new IdempotencyLimit(), 'operation'],
	['Webhook Signature', new WebhookSignature(), 'scheme'],
];

describe.each(NODES)('%s', (_node, type, parameter) => {
	const property = type.description.properties.find((p) => p.name === parameter)!;
	const options = property.options as INodePropertyOptions[];

	it.each(options.map((o) => [o.value, o.name]))(
		`${parameter} %p: the subtitle is %p`,
		(value, name) => {
			expect(subtitleOf(type, { [parameter]: String(value) })).toBe(name);
		},
	);

	it('nothing chosen: the default option, by its name', () => {
		const byDefault = options.find((o) => o.value === property.default)!;
		expect(subtitleOf(type, {})).toBe(byDefault.name);
	});
});
