import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { OutputsByOperation } from '../../descriptions/routedOutputs';
import { failedOutput as failedOutputOf } from '../failures/failedOutput';
import { itemWithResult } from '../itemWithResult';

/** Take Slot's and Check Rate's outputs (Free Slot has one). */
export const LIMIT_OUTPUTS: OutputsByOperation = {
	takeSlot: ['Got Slot', 'No Slot'],
	checkRate: ['Allowed', 'Limited'],
};
/** Output indexes of Take Slot and Check Rate. */
export const PASSED_OUTPUT = 0;
export const HELD_BACK_OUTPUT = 1;

/** Where an item that failed goes: the error output, or No Slot / Limited, so the work never runs on it. */
export const failedOutput = (context: IExecuteFunctions): number =>
	failedOutputOf(context, LIMIT_OUTPUTS, 'takeSlot');

/** The item passed on with `idempotency[field]` set beside what the claim put there; binary data kept. */
export const withLimitResult = (
	source: INodeExecutionData,
	field: 'slot' | 'rate',
	result: IDataObject,
	index: number,
): INodeExecutionData => itemWithResult(source, index, field, result);
