import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { nodeError } from './nodeError';

/**
 * Runs a node's work so that it never throws under either Continue setting. There, n8n answers a node
 * error by handing the node's input to its first output (WorkflowExecute's handleNodeExecutionError):
 * Valid for the signature check, New for the claim, so an unverified or unclaimed item would run the
 * business step. Instead every item fails where the node says it is safe. Under Stop Workflow the error
 * stands and the execution fails, which a webhook caller is answered with a 500.
 */
export async function continuingSafely(
	context: IExecuteFunctions,
	run: () => Promise<INodeExecutionData[][]>,
	failedOutputs: (error: Error) => INodeExecutionData[][],
): Promise<INodeExecutionData[][]> {
	try {
		return await run();
	} catch (error) {
		// The node's edge: whatever the work threw becomes n8n's error here, and only here.
		const failure = nodeError(context.getNode(), error);
		if (!context.continueOnFail()) throw failure;
		return failedOutputs(failure);
	}
}
