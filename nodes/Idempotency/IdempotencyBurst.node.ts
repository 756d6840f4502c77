import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { failedOutput } from './actions/burst/burstOutput';
import { routeBurst } from './actions/burst/burstRouter';
import { failedItem } from './actions/failures/databaseFailure';
import { burstProperties } from './descriptions/burstProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

// Collect has two outputs: the burst to run, and the items that joined a burst another execution runs.
const OUTPUTS_EXPRESSION: `={{${string}}}` =
	"={{ $parameter.operation === 'collect' ? [{ type: 'main', displayName: 'Burst' }, { type: 'main', displayName: 'Joined' }] : [{ type: 'main' }] }}";

export class IdempotencyBurst implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Burst',
		name: 'idempotencyBurst',
		icon: { light: 'file:idempotencyBurst.svg', dark: 'file:idempotencyBurst.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle(burstProperties, 'operation'),
		description:
			'Collect the items that arrive under one key (a chat, a record) and run the work once per burst, durably in Postgres',
		defaults: { name: 'Idempotency Burst' },
		inputs: [NodeConnectionTypes.Main],
		outputs: OUTPUTS_EXPRESSION,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: burstProperties,
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeBurst.call(this),
			(error) => {
				const failed = this.getInputData().map((_, index) =>
					failedItem(error.message, 'configuration', index),
				);
				if (this.getNodeParameter('operation', 0, 'collect') !== 'collect') return [failed];
				const outputs: INodeExecutionData[][] = [[], []];
				outputs[failedOutput(this)].push(...failed);
				return outputs;
			},
		);
	}
}
