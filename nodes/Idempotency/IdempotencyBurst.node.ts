import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { everyItemFailed } from './actions/failures/failedOutput';
import { BURST_OUTPUTS } from './actions/burst/burstOutput';
import { routeBurst } from './actions/burst/burstRouter';
import { burstProperties } from './descriptions/burstProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { routedNodeDescription } from './routedNodeDescription';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

export class IdempotencyBurst implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Burst',
		name: 'idempotencyBurst',
		icon: { light: 'file:idempotencyBurst.svg', dark: 'file:idempotencyBurst.dark.svg' },
		usableAsTool: true,
		subtitle: optionSubtitle(burstProperties, 'operation'),
		description:
			'Collect the items that arrive under one key (a chat, a record) and run the work once per burst, durably in Postgres',
		defaults: { name: 'Idempotency Burst' },
		...routedNodeDescription({ properties: burstProperties, outputs: BURST_OUTPUTS }),
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeBurst.call(this),
			(error) => everyItemFailed(this, error.message, BURST_OUTPUTS, 'collect'),
		);
	}
}
