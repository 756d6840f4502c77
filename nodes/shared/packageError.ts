/**
 * The root of every error this package raises itself (the Idempotency nodes' errors.ts, the signature
 * node's configuration error, the shared ones below): one hierarchy, each class named for its fault, so a
 * message and a test can name it and the nodes can tell their own errors from the driver's and n8n's.
 * None of them is n8n's: nodeError.ts turns them into n8n's errors at the node's edge, once.
 */
export class PackageError extends Error {
	/** The input item the fault belongs to, when it is one item's; n8n's error then names it. */
	readonly itemIndex?: number;

	constructor(message: string, options?: { cause?: unknown; itemIndex?: number }) {
		super(message, options?.cause === undefined ? undefined : { cause: options.cause });
		this.name = new.target.name;
		if (options?.itemIndex !== undefined) this.itemIndex = options.itemIndex;
	}
}

/** An options parameter holding a value its description does not offer (a hand-edited workflow, say). */
export class ChoiceError extends PackageError {}

/** A node description that lacks what the code reads from it: a fault of the package, found at load. */
export class DescriptionError extends PackageError {}
