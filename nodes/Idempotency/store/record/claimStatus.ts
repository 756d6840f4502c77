/**
 * A claim's status, the one vocabulary items carry under `idempotency.status` for a key:
 * - `processing`: held (its lease running, ended, or parked as a dead letter);
 * - `completed`: done; a repeat is answered from it;
 * - `released`: Release deleted the row, so the next delivery is new;
 * - `not_found`: Complete or Release found no row for the key;
 * - `unclaimed`: the claim node could not claim the item (a failure under a Continue setting).
 * An event kept with its claim has its own states beside these (inbox: scheduled, dead_letter, not_held;
 * the inbox summary: due, running, scheduled, dead).
 */
export type ClaimStatus = 'processing' | 'completed';

/** What Complete or Release found or left: the row's status, released (the row is gone), or not_found. */
export type SettledStatus = ClaimStatus | 'released' | 'not_found';

/** An item the claim node did not claim. */
export type UnclaimedStatus = 'unclaimed';
