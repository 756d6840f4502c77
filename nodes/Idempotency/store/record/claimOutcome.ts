import type { StoredResponse } from '../../response/storedResponse';
import type { ClaimStatus } from './claimStatus';

/** Why a delivery is a duplicate: completed work is safe to answer 200; in-progress work should be retried later. */
export type DuplicateKind = 'completed' | 'in_progress';

export type ClaimMode = 'once' | 'lease';

export interface ClaimRequest {
	key: string;
	/** Payload fingerprint to store and compare, or null when the option is off. */
	fingerprint: string | null;
	/** Claim With Lease, Keep Event: the delivery to keep with the claim until Complete. */
	event?: KeptEvent;
}

/** A delivery as it is kept with its claim, to be run again from Postgres (Take Due Events). */
export interface KeptEvent {
	body: Buffer;
	contentType: string | null;
	/** The headers the user named, lower-cased, as JSON text. */
	headers: string;
	/** The claim's Scope (null: none): Take Due Events with the same Scope runs it again. */
	scope: string | null;
}

/**
 * A kept event's fields as a claim statement takes them, in this order from its first parameter ($6):
 * the field, the event table's column and its type. The one description from KeptEvent to the SQL.
 */
export const KEPT_EVENT_COLUMNS = [
	{ field: 'contentType', column: 'content_type', type: 'text' },
	{ field: 'headers', column: 'headers', type: 'json' },
	{ field: 'body', column: 'body', type: 'bytea' },
	{ field: 'scope', column: 'scope', type: 'text' },
] as const satisfies ReadonlyArray<{ field: keyof KeptEvent; column: string; type: string }>;

/** The claim statement's parameter that holds the first kept-event column. */
export const FIRST_KEPT_EVENT_PARAM = 6;

export interface ClaimOptions {
	mode: ClaimMode;
	leaseSeconds: number;
	/** Identifies this claim attempt; only its holder may complete or release it. */
	claimId: string;
	/** Claim once: a repeat updates last_seen and deliveries (a write), or is only read. Leases always count. */
	countRepeats: boolean;
	/** The clock for first_seen, last_seen and lease expiry; the database's now() when omitted. */
	now?: Date;
	/** Claim with lease: how long a repeat waits for a claim another execution holds (0 or omitted: not at all). */
	waitMs?: number;
	/**
	 * Keep Event: runs an event may start, whoever starts them. A delivery that finds the event's claim
	 * expired after its last allowed run parks it (a dead letter) instead of running it again.
	 */
	maxAttempts?: number;
}

export interface ClaimOutcome {
	key: string;
	/** This delivery owns the key: it was new, or it took over an expired lease. */
	won: boolean;
	/** Won by taking over a processing claim whose lease had expired. */
	reclaimed: boolean;
	status: ClaimStatus;
	duplicateKind: DuplicateKind | null;
	/** The key was seen before with a different payload fingerprint. */
	mismatch: boolean;
	/** Every claim reads the key's row back, so this is always known. */
	firstSeen: Date;
	lastSeen: Date | null;
	deliveries: number | null;
	leaseUntil: Date | null;
	claimId: string | null;
	/** What Complete stored for a completed key, to replay to this repeat; null when nothing was stored. */
	response: StoredResponse | null;
}
