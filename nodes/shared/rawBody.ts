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

/** The item's raw request bytes, or undefined when it carries none under the option's property. */
export async function readRawBody(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	index: number,
): Promise<Buffer | undefined> {
	const name = context.getNodeParameter('options.binaryPropertyName', index, 'data') as string;
	return item.binary?.[name] ? await context.helpers.getBinaryDataBuffer(index, name) : undefined;
}
