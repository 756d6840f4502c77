import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MappedValueError } from '../errors';
import { idValueToString } from '../key/deriveKey';
import {
	KEPT_EVENT_UPDATE_NEEDS,
	openClaimTable,
	withCurrentTable,
} from '../store/table/claimTable';
import { requeueEvents } from '../store/inbox/inbox';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readEachItem } from './parameters/readEachItem';
import { readTableRef } from './parameters/readTableRef';
import { operationResult } from '../store/record/idempotencyResult';

/** Puts each item's dead letter back in line: due at once, Max Attempts counted afresh. */
export async function executeRequeue(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const { read: keys, failed: out } = readEachItem(this, (index) => {
		const key = idValueToString(this.getNodeParameter('key', index), 'the key');
		if (key === undefined)
			throw new MappedValueError("the key is empty: give the dead letter's key");
		return { key };
	});
	if (keys.length === 0) return [out];
	const credentials = await readCredentials(this);
	const needs = KEPT_EVENT_UPDATE_NEEDS;
	let requeued: Set<string>;
	try {
		const table = await openClaimTable(await poolFor(credentials), readTableRef(this), needs);
		requeued = new Set(
			await withCurrentTable(table, needs, (current) =>
				requeueEvents(
					current,
					keys.map(({ key }) => key),
				),
			),
		);
	} catch (error) {
		const indexes = keys.map(({ index }) => index);
		return [[...out, ...databaseFailure(this, error, credentials, indexes, true)]];
	}
	for (const { index, key } of keys) {
		out.push({
			json: {
				...items[index].json,
				// False when the key holds no dead letter (never parked, requeued already, even by an
				// earlier item of this batch, or gone).
				idempotency: operationResult(undefined, key, 'requeue', {
					requeued: requeued.delete(key),
				}) as IDataObject,
			},
			pairedItem: { item: index },
		});
	}
	return [out];
}
