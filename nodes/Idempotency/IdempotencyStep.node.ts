import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { everyItemFailed } from './actions/failures/failedOutput';
import { STEP_OUTPUTS } from './actions/step/stepOutput';
import { routeStep } from './actions/step/stepRouter';
import { stepProperties } from './descriptions/stepProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { routedNodeDescription } from './routedNodeDescription';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

export class IdempotencyStep implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Step',
		name: 'idempotencyStep',
		icon: { light: 'file:idempotencyStep.svg', dark: 'file:idempotencyStep.dark.svg' },
		usableAsTool: true,
		subtitle: optionSubtitle(stepProperties, 'operation'),
		description:
			'Guard a side effect outside Postgres (an HTTP request, an email, a payment) so a rerun of the event never repeats it silently',
		defaults: { name: 'Idempotency Step' },
		...routedNodeDescription({ properties: stepProperties, outputs: STEP_OUTPUTS }),
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeStep.call(this),
			(error) => everyItemFailed(this, error.message, STEP_OUTPUTS, 'start'),
		);
	}
}
