import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { burstOperationProperty, type BurstOperation } from '../../descriptions/burstProperties';
import { readChoice } from '../../../shared/readChoice';
import { executeCollect } from './collect.operation';
import { executeFlush } from './flush.operation';
import { executeSettleBurst } from './settleBurst.operation';

/** The Idempotency Burst node's operations; a value the description does not offer is refused. */
export async function routeBurst(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = readChoice<BurstOperation>(
		this,
		[burstOperationProperty],
		'operation',
		0,
		'collect',
	);
	switch (operation) {
		case 'collect':
			return executeCollect.call(this);
		case 'flush':
			return executeFlush.call(this);
		case 'complete':
		case 'release':
			return executeSettleBurst.call(this, operation);
	}
}
