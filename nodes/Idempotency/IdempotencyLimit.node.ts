import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { everyItemFailed } from './actions/failures/failedOutput';
import { LIMIT_OUTPUTS } from './actions/limit/limitOutput';
import { routeLimit } from './actions/limit/limitRouter';
import { limitProperties } from './descriptions/limitProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { routedNodeDescription } from './routedNodeDescription';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

export class IdempotencyLimit implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Limit',
		name: 'idempotencyLimit',
		icon: { light: 'file:idempotencyLimit.svg', dark: 'file:idempotencyLimit.dark.svg' },
		usableAsTool: true,
		subtitle: optionSubtitle(limitProperties, 'operation'),
		description:
			'Let at most N items of a key run at a time, and at most R start per window, across every execution and worker, in Postgres',
		defaults: { name: 'Idempotency Limit' },
		...routedNodeDescription({ properties: limitProperties, outputs: LIMIT_OUTPUTS }),
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeLimit.call(this),
			(error) => everyItemFailed(this, error.message, LIMIT_OUTPUTS, 'takeSlot'),
		);
	}
}
