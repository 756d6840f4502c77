import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { messageOf, nodeError } from '../../../shared/nodeError';
import { describeConnectionError } from '../../transport/describeConnectionError';
import type { PostgresCredentials } from '../../transport/postgresCredentials';

/**
 * A database failure fails every item of the execution: nothing is routed onward, so the provider
 * sees an error and its retry finds the key still free. Under a Continue setting each item carries the
 * error instead (`regularOutputIsSafe`: also under "Continue (regular output)"), and the caller routes it.
 */
export function databaseFailure(
	context: IExecuteFunctions,
	error: unknown,
	credentials: PostgresCredentials,
	itemIndexes: number[],
	regularOutputIsSafe = false,
): INodeExecutionData[] {
	const message = describeConnectionError(error, credentials);
	// The driver's own text goes under the message (n8n drops it when it says the same).
	if (!continuesOnErrorOutput(context, regularOutputIsSafe))
		throw nodeError(context.getNode(), error, { message, description: messageOf(error) });
	return itemIndexes.map((index) => failedItem(message, 'database', index));
}

/**
 * An item that failed: `error` is its kind, `message` says what happened. A workflow can answer a delivery
 * that can never be keyed (`bad_delivery`) with a 4xx, and a database failure or a node setting that cannot
 * work (`configuration`) with a retryable 5xx. `write_failed`: Complete With Write's write failed, its claim
 * still held. `not_held`: Complete With Write or a step (Idempotency Step) asked for by an execution whose
 * claim was taken over, completed or released: nothing was written, its run must stop. The shape is what
 * n8n moves to the error output: n8n 1.x only
 * an item whose json is exactly `{error}` or `{error, message}` (2.x also allows `details`), and an item
 * carrying an `error` object has its json cut down to the message, which would lose the kind.
 */
export function failedItem(
	message: string,
	errorKind: 'bad_delivery' | 'database' | 'configuration' | 'write_failed' | 'not_held',
	index: number,
): INodeExecutionData {
	return { json: { error: errorKind, message }, pairedItem: { item: index } };
}

/**
 * Whether a failed item may leave the node instead of stopping it. "Continue (regular output)" would send
 * it out of the first output; a caller for which that is not safe routes the items itself.
 */
export function continuesOnErrorOutput(
	context: IExecuteFunctions,
	regularOutputIsSafe = false,
): boolean {
	if (!context.continueOnFail()) return false;
	return regularOutputIsSafe || context.getNode().onError !== 'continueRegularOutput';
}
