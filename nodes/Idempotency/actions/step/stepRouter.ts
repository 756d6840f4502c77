import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { stepOperationProperty, type StepOperation } from '../../descriptions/stepProperties';
import { readChoice } from '../../../shared/readChoice';
import { executeFinishStep } from './finish.operation';
import { executeForgetStep } from './forget.operation';
import { executeStartStep } from './start.operation';

/** The Idempotency Step node's operations; a value the description does not offer is refused. */
export async function routeStep(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = readChoice<StepOperation>(
		this,
		[stepOperationProperty],
		'operation',
		0,
		'start',
	);
	switch (operation) {
		case 'start':
			return executeStartStep.call(this);
		case 'finish':
			return executeFinishStep.call(this);
		case 'forget':
			return executeForgetStep.call(this);
	}
}
