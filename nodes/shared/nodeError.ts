import { NodeApiError, NodeOperationError, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { PackageError } from './packageError';

/** What an error says, whatever was thrown. */
export function messageOf(error: unknown): string {
	if (error instanceof Error) return error.message;
	const message = (error as { message?: unknown } | null | undefined)?.message;
	return typeof message === 'string' ? message : String(error);
}

/**
 * The one place an error becomes n8n's. n8n's own errors pass as they are; any other (the package's, the
 * driver's, an expression's) becomes a NodeOperationError that keeps it as its cause, says `message` when
 * given (else the error's own), and names the item the package's error belongs to. A `description` is shown
 * under the message; n8n drops one equal to it.
 */
export function nodeError(
	node: INode,
	error: unknown,
	options: { message?: string; description?: string; itemIndex?: number } = {},
): NodeOperationError | NodeApiError {
	const isNodeError = error instanceof NodeOperationError || error instanceof NodeApiError;
	if (isNodeError && options.message === undefined) return error;
	const itemIndex =
		options.itemIndex ?? (error instanceof PackageError ? error.itemIndex : undefined);
	const message = options.message ?? messageOf(error);
	// n8n's constructor hands back a NodeOperationError given one, so such an error is told by its text.
	const source = error instanceof Error && !isNodeError ? error : message;
	return new NodeOperationError(node, source, {
		message,
		itemIndex,
		description: options.description,
	});
}

/** The text an item's failure carries: the item, then what went wrong with it. */
export function itemMessage(index: number, error: unknown): string {
	return `Item ${index}: ${messageOf(error)}`;
}

/**
 * An item that failed on its own. Without a Continue setting it stops the node with an error naming the
 * item; with one, its message is returned, and the caller sends the item out failed while the others go on.
 */
export function itemFailure(context: IExecuteFunctions, error: unknown, index: number): string {
	const message = itemMessage(index, error);
	if (!context.continueOnFail())
		throw nodeError(context.getNode(), error, { message, itemIndex: index });
	return message;
}
