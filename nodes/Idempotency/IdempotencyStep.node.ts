import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { failedItem } from './actions/failures/databaseFailure';
import { failedOutput } from './actions/step/stepOutput';
import { routeStep } from './actions/step/stepRouter';
import { stepOperationProperty, stepProperties } from './descriptions/stepProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

// Start Step has three outputs: run the step now, it is done already, or it may have happened.
const OUTPUTS_EXPRESSION: `={{${string}}}` =
	"={{ $parameter.operation === 'start' ? [{ type: 'main', displayName: 'Run' }, { type: 'main', displayName: 'Done' }, { type: 'main', displayName: 'Uncertain' }] : [{ type: 'main' }] }}";

export class IdempotencyStep implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Step',
		name: 'idempotencyStep',
		icon: { light: 'file:idempotencyStep.svg', dark: 'file:idempotencyStep.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle([stepOperationProperty], 'operation'),
		description:
			'Guard a side effect outside Postgres (an HTTP request, an email, a payment) so a rerun of the event never repeats it silently',
		defaults: { name: 'Idempotency Step' },
		inputs: [NodeConnectionTypes.Main],
		outputs: OUTPUTS_EXPRESSION,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: stepProperties,
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeStep.call(this),
			(error) => {
				const failed = this.getInputData().map((_, index) =>
					failedItem(error.message, 'configuration', index),
				);
				if (this.getNodeParameter('operation', 0, 'start') !== 'start') return [failed];
				const outputs: INodeExecutionData[][] = [[], [], []];
				outputs[failedOutput(this)].push(...failed);
				return outputs;
			},
		);
	}
}
