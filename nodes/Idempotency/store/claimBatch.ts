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
	// One webhook per execution is the common case: nothing to look for.
	if (requests.length === 1) return claimKeys(table, requests, options);
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
	const outcomes = await claimKeys(table, distinct, options);
	if (distinct.length === requests.length) return outcomes;
	return requests.map((request, index) => {
		const position = positions[index];
		const first = distinct[position];
		if (first === request) return outcomes[position];
		return repeatWithinBatch(outcomes[position], first, request, options);
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
