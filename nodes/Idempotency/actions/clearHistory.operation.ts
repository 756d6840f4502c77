import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { SettingError } from '../errors';
import { checkScope, scopePrefix } from '../key/scope';
import { clearScope } from '../store/claims/clearScope';
import { watermarkRef } from '../store/watermark/watermarkTable';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readBatchSize } from './parameters/readBatchSize';
import { readTableRef } from './parameters/readTableRef';

/**
 * Remove Duplicates' Clear Deduplication History: deletes one scope's keys and its watermark once per
 * execution, whatever the number of input items, and passes the items on with what it removed.
 */
export async function executeClearHistory(
	this: IExecuteFunctions,
): Promise<INodeExecutionData[][]> {
	const scope = readClearScope(this.getNodeParameter('clearScope', 0, ''));
	const batchSize = readBatchSize(this);
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	const items = this.getInputData();
	try {
		const result = await clearScope(await poolFor(credentials), ref, watermarkRef(ref), {
			scope,
			keyPrefix: scopePrefix(scope),
			batchSize,
		});
		// As Remove Duplicates: the input items go on, here each told what was cleared.
		const cleared = {
			operation: 'clearHistory',
			table: `${ref.schema}.${ref.table}`,
			scope,
			...result,
		};
		return [
			items.map((item, index) => ({
				...item,
				json: { ...item.json, idempotency: cleared },
				pairedItem: { item: index },
			})),
		];
	} catch (error) {
		return [
			databaseFailure(
				this,
				error,
				credentials,
				items.map((_, index) => index),
				true,
			),
		];
	}
}

function readClearScope(value: unknown): string {
	const scope = String(value ?? '').trim();
	if (scope === '') {
		throw new SettingError(
			'Scope is empty. Clear Deduplication History deletes one scope and never a whole table: give the scope (to delete keys by age, use Purge)',
		);
	}
	// A reserved scope would also match keys made without one, or Idempotency Burst's (checkScope refuses it).
	return checkScope(scope);
}
