import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { describeConnectionError } from '../transport/describeConnectionError';
import type { PostgresCredentials } from '../transport/postgresCredentials';

/**
 * A database failure fails every item of the execution: nothing is routed onward, so the provider
 * sees an error and its retry finds the key still free. With "Continue On Fail" each item carries the
 * error instead (n8n moves such items to the error output when that is enabled).
 */
export function databaseFailure(
	context: IExecuteFunctions,
	error: unknown,
	credentials: PostgresCredentials,
	itemIndexes: number[],
): INodeExecutionData[] {
	const message = describeConnectionError(error, credentials);
	if (!context.continueOnFail()) {
		const detail = (error as Error)?.message;
		throw new NodeOperationError(context.getNode(), message, { description: detail === message ? undefined : detail });
	}
	return itemIndexes.map((index) => ({ json: { error: message }, pairedItem: { item: index } }));
}
