import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { OutputsByOperation } from '../../descriptions/routedOutputs';
import { failedOutput as failedOutputOf } from '../failures/failedOutput';
import { itemWithResult } from '../itemWithResult';

/** Start Step's outputs (Finish and Forget Step have one). */
export const STEP_OUTPUTS: OutputsByOperation = { start: ['Run', 'Done', 'Uncertain'] };
/** Output indexes of Start Step. */
export const RUN_OUTPUT = 0;
export const DONE_OUTPUT = 1;
export const UNCERTAIN_OUTPUT = 2;

/** Where an item that failed goes: the error output, or Uncertain, so the step never runs on it. */
export const failedOutput = (context: IExecuteFunctions): number =>
	failedOutputOf(context, STEP_OUTPUTS, 'start');

/** The input item, its `idempotency` carrying what the operation says about the step under `step`. */
export const stepItem = (
	context: IExecuteFunctions,
	index: number,
	step: IDataObject,
): INodeExecutionData => itemWithResult(context.getInputData()[index], index, 'step', step);
