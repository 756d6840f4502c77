import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { keyOperationProperty, type KeyOperation } from '../descriptions/keyOperationProperty';
import { readChoice } from '../../shared/readChoice';
import { executeClearHistory } from './clearHistory.operation';
import { executeCompleteWithWrite } from './completeWithWrite.operation';
import { executeInboxBulk } from './inboxBulk.operation';
import { executeInboxSummary } from './inboxSummary.operation';
import { executePurge } from './purge.operation';
import { executeRequeue } from './requeue.operation';
import { executeRetryLater } from './retryLater.operation';
import { executeSettle } from './settle.operation';
import { executeListStuck } from './stuckClaims.operation';
import { executeTakeDue } from './takeDue.operation';

/** The Idempotency Key node's operations: adding one is adding a file and a line here. */
export async function routeKeyOperation(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = readChoice<KeyOperation>(
		this,
		[keyOperationProperty],
		'operation',
		0,
		'complete',
	);
	switch (operation) {
		case 'purge':
			return executePurge.call(this);
		case 'listStuck':
			return executeListStuck.call(this);
		case 'clearHistory':
			return executeClearHistory.call(this);
		case 'retryLater':
			return executeRetryLater.call(this);
		case 'takeDue':
			return executeTakeDue.call(this);
		case 'requeue':
			return executeRequeue.call(this);
		case 'requeueEvents':
		case 'discardEvents':
			return executeInboxBulk.call(this, operation);
		case 'inboxSummary':
			return executeInboxSummary.call(this);
		case 'completeWithWrite':
			return executeCompleteWithWrite.call(this);
		case 'complete':
		case 'release':
			return executeSettle.call(this, operation);
	}
}
