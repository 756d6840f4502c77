import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { failedItem } from './actions/failures/databaseFailure';
import { failedOutput } from './actions/limit/limitOutput';
import { routeLimit } from './actions/limit/limitRouter';
import { limitProperties } from './descriptions/limitProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

// Take Slot and Check Rate have two outputs: the items that may run the work now, and those held back.
const OUTPUTS_EXPRESSION: `={{${string}}}` =
	"={{ $parameter.operation === 'takeSlot' ? [{ type: 'main', displayName: 'Got Slot' }, { type: 'main', displayName: 'No Slot' }] : $parameter.operation === 'checkRate' ? [{ type: 'main', displayName: 'Allowed' }, { type: 'main', displayName: 'Limited' }] : [{ type: 'main' }] }}";

export class IdempotencyLimit implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Limit',
		name: 'idempotencyLimit',
		icon: { light: 'file:idempotencyLimit.svg', dark: 'file:idempotencyLimit.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle(limitProperties, 'operation'),
		description:
			'Let at most N items of a key run at a time, and at most R start per window, across every execution and worker, in Postgres',
		defaults: { name: 'Idempotency Limit' },
		inputs: [NodeConnectionTypes.Main],
		outputs: OUTPUTS_EXPRESSION,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: limitProperties,
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeLimit.call(this),
			(error) => {
				const failed = this.getInputData().map((_, index) =>
					failedItem(error.message, 'configuration', index),
				);
				if (this.getNodeParameter('operation', 0, 'takeSlot') === 'freeSlot') return [failed];
				const outputs: INodeExecutionData[][] = [[], []];
				outputs[failedOutput(this)].push(...failed);
				return outputs;
			},
		);
	}
}
