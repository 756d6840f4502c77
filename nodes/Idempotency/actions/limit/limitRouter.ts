import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readChoice } from '../../../shared/readChoice';
import { limitOperationProperty, type LimitOperation } from '../../descriptions/limitProperties';
import { executeCheckRate } from './checkRate.operation';
import { executeFreeSlot } from './freeSlot.operation';
import { executeTakeSlot } from './takeSlot.operation';

/** The Idempotency Limit node's operations; a value the description does not offer is refused. */
export async function routeLimit(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = readChoice<LimitOperation>(
		this,
		[limitOperationProperty],
		'operation',
		0,
		'takeSlot',
	);
	switch (operation) {
		case 'takeSlot':
			return executeTakeSlot.call(this);
		case 'freeSlot':
			return executeFreeSlot.call(this);
		case 'checkRate':
			return executeCheckRate.call(this);
	}
}
