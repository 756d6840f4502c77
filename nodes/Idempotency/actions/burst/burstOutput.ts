import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { Burst } from '../../store/bursts/burstRecord';

/** Output indexes of Collect (Flush Due Bursts, Complete and Release have the first only). */
export const BURST_OUTPUT = 0;
export const JOINED_OUTPUT = 1;

/** One burst as one item: the work runs once for it, with every collected item in arrival order. */
export function burstItem(burst: Burst, pairedWith: number): INodeExecutionData {
	return {
		json: {
			burst: {
				id: burst.id,
				key: burst.key,
				claimId: burst.claimId,
				edge: burst.edge,
				endedBy: burst.endedBy,
				count: burst.items.length,
				items: burst.items as IDataObject[],
				arrivedAt: burst.arrivedAt.map((date) => date.toISOString()),
				openedAt: burst.openedAt.toISOString(),
				endedAt: burst.endedAt.toISOString(),
				leaseUntil: burst.leaseUntil.toISOString(),
				takenOver: burst.takeovers > 0,
			},
		},
		pairedItem: { item: pairedWith },
	};
}

/**
 * Where an item that failed goes: under "Continue (using error output)" the first output, which n8n
 * moves to the error output; under "Continue (regular output)" Joined, so the work never runs on it.
 */
export function failedOutput(context: IExecuteFunctions): number {
	return context.getNode().onError === 'continueErrorOutput' ? BURST_OUTPUT : JOINED_OUTPUT;
}
