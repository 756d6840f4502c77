import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { executeClearHistory } from './clearHistory.operation';
import { executePurge } from './purge.operation';
import { executeSettle, type SettleOperation } from './settle.operation';
import { executeListStuck } from './stuckClaims.operation';

type KeyOperation = SettleOperation | 'purge' | 'listStuck' | 'clearHistory';

/** The Idempotency Key node's operations: adding one is adding a file and a line here. */
export async function routeKeyOperation(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = this.getNodeParameter('operation', 0) as KeyOperation;
	if (operation === 'purge') return executePurge.call(this);
	if (operation === 'listStuck') return executeListStuck.call(this);
	if (operation === 'clearHistory') return executeClearHistory.call(this);
	return executeSettle.call(this, operation);
}
