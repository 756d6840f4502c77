import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/** Output indexes of Start Step (Finish and Forget Step have the first only). */
export const RUN_OUTPUT = 0;
export const DONE_OUTPUT = 1;
export const UNCERTAIN_OUTPUT = 2;

/**
 * Where an item that failed goes: under "Continue (using error output)" the first output, which n8n
 * moves to the error output; under "Continue (regular output)" Uncertain, so the step never runs on it.
 */
export function failedOutput(context: IExecuteFunctions): number {
	return context.getNode().onError === 'continueErrorOutput' ? RUN_OUTPUT : UNCERTAIN_OUTPUT;
}

/** The input item, its `idempotency` carrying what the operation says about the step under `step`. */
export function stepItem(
	context: IExecuteFunctions,
	index: number,
	step: IDataObject,
): INodeExecutionData {
	const source = context.getInputData()[index];
	const idempotency = (source.json.idempotency ?? {}) as IDataObject;
	const item: INodeExecutionData = {
		json: { ...source.json, idempotency: { ...idempotency, step } },
		pairedItem: { item: index },
	};
	if (source.binary) item.binary = source.binary;
	return item;
}
