/**
 * The errors this package raises itself. Callers tell them apart by class: a KeyError is one item's
 * fault (the other items can go on), a TableError is the table's or the role's (nothing can be claimed
 * until someone changes it), and a ClaimError says a claim could not be decided safely.
 */
export class IdempotencyError extends Error {
	constructor(message: string, options?: { cause?: unknown }) {
		super(message, options);
		this.name = new.target.name;
	}
}

/** An item from which no key (or no usable key) can be made. */
export class KeyError extends IdempotencyError {}

/** The claim table is missing, has the wrong shape, or the role may not use it as the operation needs. */
export class TableError extends IdempotencyError {}

/** A claim whose outcome cannot be known for sure; nothing was routed, so the delivery stays retryable. */
export class ClaimError extends IdempotencyError {}

/** A watermark the values cannot be compared with: its scope holds the other kind (numbers or dates). */
export class WatermarkError extends IdempotencyError {}
