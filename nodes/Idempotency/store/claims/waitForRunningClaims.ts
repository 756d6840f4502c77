import { storedResponseOf } from '../../response/storedResponse';
import { claimKeys } from './claimKeys';
import type { ClaimOptions, ClaimOutcome, ClaimRequest } from '../record/claimOutcome';
import { claimStateLookSql } from './claimSql';
import type { ClaimStateRow } from '../record/claimState';
import type { ClaimTable } from '../table/claimTable';
import { pauseUnlessSettled } from './settleSignals';
import { storedClaimId } from '../record/storedValues';
import { processClock } from '../../../shared/processClock';
import { isParkedLease } from '../record/claimConditions';

/** The first look comes soon (most business steps are short), then every 50 ms at most. */
const FIRST_LOOK_MS = 10;
const LOOK_GROWTH = 1.5;
const LONGEST_GAP_MS = 50;

/** A waited-for key as a look reads it: its stored state (claimState) and whether its lease has run out. */
interface LookedRow extends ClaimStateRow {
	key: string;
	expired: boolean;
}

/**
 * Waits, up to `waitMs`, for the claims other executions hold on these outcomes' keys (duplicates
 * `in_progress`, not mismatched). Each look is one short read of the keys' rows through the pool: no
 * connection is kept between looks and no session state is used (no LISTEN, no advisory lock), so it
 * holds behind a transaction pooler and across queue-mode workers (where the holder runs in this process,
 * its Complete or Release wakes the waiters at once: settleSignals). A key whose holder completed becomes
 * a completed duplicate carrying the stored response; a key released, or whose lease ran out, is claimed
 * again (this delivery wins it, or another waiter did and the wait goes on); a key still held when the
 * time is up stays `in_progress`, as without waiting. A takeover after an expired lease counts this
 * delivery a second time (the claim statement counts every delivery it sees). Outcomes are changed in place.
 */
export async function waitForRunningClaims(
	table: ClaimTable,
	requests: ClaimRequest[],
	outcomes: ClaimOutcome[],
	options: ClaimOptions,
	waitMs: number,
	sleep: (ms: number) => Promise<void> = processClock.sleep,
): Promise<void> {
	const deadline = processClock.nowMs() + waitMs;
	let waiting = outcomes.flatMap((outcome, position) => (heldElsewhere(outcome) ? [position] : []));
	for (let look = 0; waiting.length > 0; look++) {
		const left = deadline - processClock.nowMs();
		if (left <= 0) return;
		const keys = waiting.map((position) => requests[position].key);
		// The next look comes after its gap, or at once when this process settles one of the keys.
		await pauseUnlessSettled(table.ref.qualified, keys, Math.min(left, gapBefore(look)), sleep);
		const states = await lookAt(table, keys, options);
		const reclaim: number[] = [];
		for (const position of waiting) {
			const state = states.get(requests[position].key);
			if (!state || state.expired) reclaim.push(position);
			else if (!state.processing) outcomes[position] = completedBy(outcomes[position], state);
		}
		if (reclaim.length > 0) {
			const again = await claimKeys(
				table,
				reclaim.map((position) => requests[position]),
				options,
			);
			reclaim.forEach((position, i) => (outcomes[position] = again[i]));
		}
		waiting = waiting.filter((position) => heldElsewhere(outcomes[position]));
	}
}

/**
 * A duplicate of a claim another execution holds for the same payload: what a repeat waits for. Not a
 * dead letter (its lease is `infinity`): it never ends, so waiting would only delay the answer.
 */
function heldElsewhere(outcome: ClaimOutcome): boolean {
	return (
		outcome.duplicateKind === 'in_progress' &&
		!outcome.mismatch &&
		!isParkedLease(outcome.leaseUntil)
	);
}

/** Gaps grow from 10 ms to 50 ms, each shortened by up to a fifth so that waiters spread out. */
function gapBefore(look: number): number {
	const gap = Math.min(LONGEST_GAP_MS, FIRST_LOOK_MS * LOOK_GROWTH ** look);
	return Math.round(gap * (0.8 + Math.random() * 0.2));
}

function completedBy(outcome: ClaimOutcome, state: ClaimStateRow): ClaimOutcome {
	return {
		...outcome,
		status: 'completed',
		duplicateKind: 'completed',
		leaseUntil: null,
		response: storedResponseOf(state.response),
	};
}

async function lookAt(
	table: ClaimTable,
	keys: string[],
	options: ClaimOptions,
): Promise<Map<string, LookedRow>> {
	const { rows } = await table.pool.query<LookedRow>(claimStateLookSql(table), [
		keys,
		options.now ?? null,
		storedClaimId(table.layout, options.claimId),
	]);
	return new Map(rows.map((row) => [row.key, row]));
}
