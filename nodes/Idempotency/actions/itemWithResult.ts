import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

/**
 * The input item passed on with `idempotency[field]` set to an operation's answer, beside what the claim
 * put there; its binary data kept.
 */
export function itemWithResult(
	source: INodeExecutionData,
	index: number,
	field: string,
	result: IDataObject,
): INodeExecutionData {
	const idempotency = (source.json.idempotency ?? {}) as IDataObject;
	const item: INodeExecutionData = {
		json: { ...source.json, idempotency: { ...idempotency, [field]: result } },
		pairedItem: { item: index },
	};
	if (source.binary) item.binary = source.binary;
	return item;
}
