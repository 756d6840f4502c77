import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/** Output indexes of Take Slot (Got Slot, No Slot) and Check Rate (Allowed, Limited); Free Slot has the first only. */
export const PASSED_OUTPUT = 0;
export const HELD_BACK_OUTPUT = 1;

/**
 * Where an item that failed goes: under "Continue (using error output)" the first output, which n8n
 * moves to the error output; under "Continue (regular output)" No Slot or Limited, so the work never
 * runs on it. Free Slot has one output.
 */
export function failedOutput(context: IExecuteFunctions): number {
	if (context.getNodeParameter('operation', 0, 'takeSlot') === 'freeSlot') return PASSED_OUTPUT;
	return context.getNode().onError === 'continueErrorOutput' ? PASSED_OUTPUT : HELD_BACK_OUTPUT;
}

/** The item passed on with `idempotency[field]` set beside what the claim put there; binary data kept. */
export function withLimitResult(
	source: INodeExecutionData,
	field: 'slot' | 'rate',
	result: IDataObject,
	index: number,
): INodeExecutionData {
	const idempotency = (source.json.idempotency ?? {}) as IDataObject;
	const item: INodeExecutionData = {
		json: { ...source.json, idempotency: { ...idempotency, [field]: result } },
		pairedItem: { item: index },
	};
	if (source.binary) item.binary = source.binary;
	return item;
}
