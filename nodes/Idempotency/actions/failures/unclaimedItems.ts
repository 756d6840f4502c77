import type { IDataObject, INodeExecutionData, IExecuteFunctions } from 'n8n-workflow';

import { unclaimedResult } from '../../store/record/idempotencyResult';

/** Where the claim node sends an item it did not claim, under a Continue setting. */
export type UnclaimedRoute = 'errorOutput' | 'duplicate';

/**
 * Under "Continue (using error output)" a failed item leaves New holding only error fields, and n8n moves it to
 * the error output. Under "Continue (regular output)" n8n moves nothing and New runs the business step, so the
 * item leaves on Duplicate instead, marked as a delivery to retry (see unclaimedItem).
 */
export function unclaimedRoute(context: IExecuteFunctions): UnclaimedRoute {
	return context.getNode().onError === 'continueErrorOutput' ? 'errorOutput' : 'duplicate';
}

/**
 * The failed item as its route needs it. On Duplicate it keeps the delivery and says `status: "unclaimed"`
 * with `duplicateKind: "in_progress"`: not done, answer 409 or 503 so the provider retries, as for a claim
 * another execution holds (only `completed` means answer 200).
 */
export function unclaimedItem(
	route: UnclaimedRoute,
	failed: INodeExecutionData,
	source: INodeExecutionData,
): INodeExecutionData {
	if (route === 'errorOutput') return failed;
	const item: INodeExecutionData = {
		json: {
			...source.json,
			...failed.json,
			idempotency: unclaimedResult() as IDataObject,
		},
		pairedItem: failed.pairedItem,
	};
	if (source.binary) item.binary = source.binary;
	return item;
}
