/**
 * The root of every error this package raises itself (the Idempotency nodes' errors.ts, the signature
 * node's configuration error): one hierarchy, each class named for its fault, so a message and a test
 * can name it and the nodes can tell their own errors from the driver's and n8n's.
 */
export class PackageError extends Error {
	constructor(message: string, options?: { cause?: unknown }) {
		super(message, options);
		this.name = new.target.name;
	}
}
