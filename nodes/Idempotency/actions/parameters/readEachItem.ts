import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { failedItem } from '../failures/databaseFailure';

/**
 * Reads each item's settings (its Key, Claim ID, …) with `read`. An item whose settings cannot work (an
 * empty key or claim ID, a response it cannot store) fails on its own, naming the item: it stops the node
 * without a Continue setting, and otherwise leaves as `{error: "configuration", message}`, the shape every
 * failed item has, while the others go on.
 */
export function readEachItem<T>(
	context: IExecuteFunctions,
	read: (index: number) => T,
): { read: Array<T & { index: number }>; failed: INodeExecutionData[] } {
	const items = context.getInputData();
	const result: Array<T & { index: number }> = [];
	const failed: INodeExecutionData[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			result.push({ ...read(index), index });
		} catch (error) {
			failed.push(failedItem(itemFailure(context, error, index), 'configuration', index));
		}
	}
	return { read: result, failed };
}
