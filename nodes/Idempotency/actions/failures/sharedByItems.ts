import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { failedItem } from './databaseFailure';

/**
 * The requests whose `identity` no other item of the execution has. One request per identity is what the
 * statement can honour (one write per claim, one result per step); where items share one, any would act for
 * all and the others be lost, so every item of it fails into `out` with `refusal(request, indexes)`.
 */
export function unsharedRequests<R extends { index: number }>(
	context: IExecuteFunctions,
	requests: R[],
	identity: (request: R) => string,
	refusal: (request: R, indexes: number[]) => Error,
	out: INodeExecutionData[],
): R[] {
	const itemsOf = new Map<string, number[]>();
	for (const request of requests)
		itemsOf.set(identity(request), [...(itemsOf.get(identity(request)) ?? []), request.index]);
	return requests.filter((request) => {
		const indexes = itemsOf.get(identity(request))!;
		if (indexes.length === 1) return true;
		const failure = itemFailure(context, refusal(request, indexes), request.index);
		out.push(failedItem(failure, 'configuration', request.index));
		return false;
	});
}
