import { claimKeys, releaseWonKeys } from './claimKeys';
import type { ClaimOptions, ClaimOutcome, ClaimRequest } from '../record/claimOutcome';
import type { ClaimTable } from '../table/claimTable';
import { fingerprintsDiffer } from '../record/storedValues';
import { waitForRunningClaims } from './waitForRunningClaims';

/**
 * Claims one request per item, all in one call. When a batch holds the same key twice, the first item
 * gets the claim's outcome and every later one is a duplicate of it.
 */
export async function claimBatch(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<ClaimOutcome[]> {
	// One webhook per execution is the common case: nothing to look for.
	if (requests.length === 1) return claimAndWait(table, requests, options);
	// Where each key first appears among the distinct requests.
	const firstAt = new Map<string, number>();
	const distinct: ClaimRequest[] = [];
	const positions = new Array<number>(requests.length);
	for (let index = 0; index < requests.length; index++) {
		const request = requests[index];
		let position = firstAt.get(request.key);
		if (position === undefined) {
			position = distinct.push(request) - 1;
			firstAt.set(request.key, position);
		}
		positions[index] = position;
	}
	const outcomes = await claimAndWait(table, distinct, options);
	if (distinct.length === requests.length) return outcomes;
	return requests.map((request, index) => {
		const position = positions[index];
		const first = distinct[position];
		if (first === request) return outcomes[position];
		return repeatWithinBatch(outcomes[position], first, request, options);
	});
}

/**
 * Claims distinct keys and, when asked to, waits for the claims other executions hold. A later item of
 * this batch with the same key never waits: its holder is this very execution. If the wait fails, every
 * key this delivery won is released before the error is raised, so the provider's retry finds them free.
 */
async function claimAndWait(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<ClaimOutcome[]> {
	const outcomes = await claimKeys(table, requests, options);
	if (!options.waitMs || options.mode !== 'lease') return outcomes;
	let waited = false;
	try {
		await waitForRunningClaims(table, requests, outcomes, options, options.waitMs);
		waited = true;
		return outcomes;
	} finally {
		if (!waited) await releaseWonKeys(table, outcomes, options.claimId);
	}
}

function repeatWithinBatch(
	outcome: ClaimOutcome,
	first: ClaimRequest,
	repeat: ClaimRequest,
	options: ClaimOptions,
): ClaimOutcome {
	const winnerStillWorking = outcome.won && options.mode === 'lease';
	return {
		...outcome,
		won: false,
		reclaimed: false,
		duplicateKind: outcome.won
			? winnerStillWorking
				? 'in_progress'
				: 'completed'
			: outcome.duplicateKind,
		mismatch: outcome.mismatch || fingerprintsDiffer(first.fingerprint, repeat.fingerprint),
		claimId: null,
	};
}
