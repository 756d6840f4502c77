import type { ClaimOutcome } from './claimOutcome';
import type { SettledStatus, UnclaimedStatus } from './claimStatus';

/**
 * What an item carries under `idempotency`: every node operation's answer about a key, built here so its
 * fields are named and filled one way. Plain values only (ISO text for times): n8n copies it as JSON.
 */
export type IdempotencyResult = { [field: string]: unknown };

/** How the claim node derived a key (key/'s DerivedKey). */
export interface KeyDerivation {
	key: string;
	origin: string;
	hashedLongValue: boolean;
}

/**
 * ISO text of a time; the last answer is remembered because a batch's rows share their timestamps. A dead
 * letter's lease never ends: Postgres' infinity, which pg gives as the number Infinity.
 */
export function isoFormatter(): (date: Date | null) => string | null {
	let lastTime: number | undefined;
	let lastText: string | null = null;
	return (date) => {
		if (date === null) return null;
		const time = date.valueOf();
		if (!Number.isFinite(time)) return time > 0 ? 'infinity' : '-infinity';
		if (time !== lastTime) {
			lastTime = time;
			lastText = date.toISOString();
		}
		return lastText;
	};
}

/** A claimed, repeated or mismatched key as the claim node routes it. */
export function claimResult(
	derived: KeyDerivation,
	outcome: ClaimOutcome,
	iso: (date: Date | null) => string | null,
): IdempotencyResult {
	const result: IdempotencyResult = {
		key: derived.key,
		isNew: outcome.won,
		status: outcome.status,
		duplicateKind: outcome.duplicateKind,
		mismatch: outcome.mismatch,
		reclaimed: outcome.reclaimed,
		keySource: derived.origin,
		keyValueHashed: derived.hashedLongValue,
		firstSeen: iso(outcome.firstSeen),
		lastSeen: iso(outcome.lastSeen),
		deliveries: outcome.deliveries,
		leaseUntil: iso(outcome.leaseUntil),
		claimId: outcome.claimId,
	};
	// A completed repeat of a key whose Complete stored a response: what to answer it with.
	if (outcome.response) result.response = outcome.response;
	return result;
}

/** A kept event Take Due Events took over: a claim this run holds, as a sender's retry would have won it. */
export interface TakenEvent {
	key: string;
	attempts: number;
	lastError: string | null;
	receivedAt: Date;
	leaseUntil: Date;
}

export function takenEventResult(event: TakenEvent, claimId: string): IdempotencyResult {
	return {
		key: event.key,
		isNew: true,
		status: 'processing',
		reclaimed: true,
		source: 'inbox',
		claimId,
		attempts: event.attempts,
		lastError: event.lastError,
		receivedAt: event.receivedAt.toISOString(),
		leaseUntil: event.leaseUntil.toISOString(),
	};
}

/**
 * An item the claim node did not claim, sent on Duplicate: not done, so the sender should retry, as for
 * a claim another execution holds (only `completed` means answer 200).
 */
export function unclaimedResult(): IdempotencyResult {
	const status: UnclaimedStatus = 'unclaimed';
	return { key: null, isNew: false, status, duplicateKind: 'in_progress', claimId: null };
}

/**
 * A Key node operation's answer about one key: what the item carried under `idempotency` before (a
 * claim's result, kept where `previous` is given), then the key, the operation and its own fields.
 */
export function operationResult(
	previous: unknown,
	key: string,
	operation: string,
	fields: IdempotencyResult,
): IdempotencyResult {
	return {
		...((previous as object | undefined) ?? {}),
		key,
		operation,
		...fields,
	};
}

/** Complete or Release: whether it did, and the row's status now. */
export function settledResult(
	previous: unknown,
	key: string,
	operation: 'complete' | 'release',
	status: SettledStatus,
): IdempotencyResult {
	return operationResult(previous, key, operation, {
		// False when the key was not found, is held by another claim, or (Release) was already completed.
		[operation === 'complete' ? 'completed' : 'released']:
			status === (operation === 'complete' ? 'completed' : 'released'),
		// What the row is now, in place of the claim's `processing`: completed, released (the row is
		// gone), processing (held by another claim, untouched) or not_found.
		status,
	});
}
