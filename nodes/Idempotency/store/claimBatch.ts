import { claimKeys } from './claimKeys';
import {
	fingerprintsDiffer,
	type ClaimOptions,
	type ClaimOutcome,
	type ClaimRequest,
} from './claimOutcome';
import type { ClaimTable } from './claimTable';

/**
 * Claims one request per item, all in one call. When a batch holds the same key twice, the first item
 * gets the claim's outcome and every later one is a duplicate of it.
 */
export async function claimBatch(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<ClaimOutcome[]> {
	const firstByKey = new Map<string, ClaimRequest>();
	for (const request of requests)
		if (!firstByKey.has(request.key)) firstByKey.set(request.key, request);
	const outcomes = await claimKeys(table, [...firstByKey.values()], options);
	return requests.map((request) => {
		const outcome = outcomes.get(request.key)!;
		const first = firstByKey.get(request.key)!;
		if (first === request) return outcome;
		return repeatWithinBatch(outcome, first, request, options);
	});
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
		claimToken: null,
	};
}
