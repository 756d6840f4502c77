import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

/**
 * Both nodes read the exact request bytes the Webhook node keeps as binary data (its Raw Body option):
 * the claim for a body-hash key or fingerprint, the signature check for the signed content.
 */
export const binaryPropertyOption: INodeProperties = {
	displayName: 'Binary Property',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	description: 'Where the Webhook node puts the raw request bytes (its Raw Body option must be on)',
};

/** The binary property the option names for this item. */
function rawBodyProperty(context: IExecuteFunctions, index: number): string {
	return context.getNodeParameter('options.binaryPropertyName', index, 'data') as string;
}

/** The item's raw request bytes, or undefined when it carries none under that property. */
export async function readRawBody(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	index: number,
	property = rawBodyProperty(context, index),
): Promise<Buffer | undefined> {
	return item.binary?.[property]
		? await context.helpers.getBinaryDataBuffer(index, property)
		: undefined;
}
