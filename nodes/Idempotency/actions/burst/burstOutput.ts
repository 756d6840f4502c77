import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { OutputsByOperation } from '../../descriptions/routedOutputs';
import type { Burst } from '../../store/bursts/burstRecord';
import { failedOutput as failedOutputOf } from '../failures/failedOutput';

/** Collect's outputs (Flush Due Bursts, Complete and Release have one). */
export const BURST_OUTPUTS: OutputsByOperation = { collect: ['Burst', 'Joined'] };
/** Output indexes of Collect. */
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

/** Where an item that failed goes: the error output, or Joined, so the work never runs on it. */
export const failedOutput = (context: IExecuteFunctions): number =>
	failedOutputOf(context, BURST_OUTPUTS, 'collect');
