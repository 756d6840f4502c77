import { PackageError } from '../shared/packageError';

/**
 * The errors this package raises itself, one class per kind of fault so a message and a test can name it:
 * a KeyError is one item's (no key can be made from it), a TableError the table's or the role's, a
 * ClaimError says a claim could not be decided safely, a WatermarkError that a scope's mark holds the
 * other kind of value, a ResponseError that Complete was given a response it cannot store. The nodes
 * route by where a failure happens (reading one item, or the database call for all), not by class: an
 * item's key failure is `bad_delivery`, anything the database call raises fails every item. None of them
 * is n8n's: nodes/shared/nodeError.ts makes n8n's error from them, at the node's edge or for one item.
 */
export class IdempotencyError extends PackageError {}

/** An item from which no key (or no usable key) can be made. */
export class KeyError extends IdempotencyError {}

/** A node setting that cannot be used as given (a reserved Scope, say): the message names it. */
export class SettingError extends IdempotencyError {}

/** The claim table is missing, has the wrong shape, or the role may not use it as the operation needs. */
export class TableError extends IdempotencyError {}

/** A claim whose outcome cannot be known for sure; nothing was routed, so the delivery stays retryable. */
export class ClaimError extends IdempotencyError {}

/** A watermark the values cannot be compared with: its scope holds the other kind (numbers or dates). */
export class WatermarkError extends IdempotencyError {}

/** A response Complete cannot store: a bad status code or header, a body that is not JSON, or too large. */
export class ResponseError extends IdempotencyError {}

/** An event too large to keep with its claim: a setting to raise, so the delivery is refused unclaimed. */
export class EventSizeError extends IdempotencyError {}

/** A credential field with no usable certificate or key in it; the message names the field and the problem. */
export class TlsMaterialError extends IdempotencyError {}

/**
 * An item's mapped value (its key, claim ID, burst key, burst ID, item ID) that is empty or not one the
 * operation can use: the message names the field and where to map it from.
 */
export class MappedValueError extends IdempotencyError {}

/** A polled item without a Scope in a workflow never saved: its history is kept per node, which has no ID yet. */
export class UnsavedWorkflowError extends IdempotencyError {}

/** Retry Later on a claim that keeps no event: there is nothing in Postgres to run again. */
export class NoKeptEventError extends IdempotencyError {}

/** The execution was cancelled while it waited (for its burst to end, or for slots). */
export class CancelledError extends IdempotencyError {}

/** The business write of Complete With Write failed: rolled back with the Complete, so the claim stays held. */
export class WriteError extends IdempotencyError {}

/** Complete With Write found the claim no longer this execution's: nothing was written. */
export class ClaimNotHeldError extends IdempotencyError {}

/**
 * A step Idempotency Step cannot start or finish as asked: the claim is not this execution's, the step was
 * not started by it, or its result is too large to record. The message names the step and the key.
 */
export class StepError extends IdempotencyError {}
