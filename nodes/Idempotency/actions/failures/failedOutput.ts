import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { OutputsByOperation } from '../../descriptions/routedOutputs';
import { failedItem } from './databaseFailure';

/**
 * Where an item that failed goes: under "Continue (using error output)" the first output, which n8n moves
 * to the error output; under "Continue (regular output)" the last, which holds items back from the work, so
 * the work never runs on it. An operation with one output has only that.
 */
export function failedOutput(
	context: IExecuteFunctions,
	outputs: OutputsByOperation,
	defaultOperation: string,
): number {
	const count = outputsOf(context, outputs, defaultOperation);
	return context.getNode().onError === 'continueErrorOutput' ? 0 : count - 1;
}

/** Every item failed with `message` (the node could not run at all), each output in place. */
export function everyItemFailed(
	context: IExecuteFunctions,
	message: string,
	outputs: OutputsByOperation,
	defaultOperation: string,
): INodeExecutionData[][] {
	const routed: INodeExecutionData[][] = Array.from(
		{ length: outputsOf(context, outputs, defaultOperation) },
		() => [],
	);
	routed[failedOutput(context, outputs, defaultOperation)].push(
		...context.getInputData().map((_, index) => failedItem(message, 'configuration', index)),
	);
	return routed;
}

function outputsOf(
	context: IExecuteFunctions,
	outputs: OutputsByOperation,
	defaultOperation: string,
): number {
	const operation = context.getNodeParameter('operation', 0, defaultOperation) as string;
	return outputs[operation]?.length ?? 1;
}
