import type { ClaimTable } from '../table/claimTable';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { stepTableRef } from './stepTable';
import type { StepRequest } from './stepRecord';

/**
 * Deletes the marks a Start Step just made for steps whose Run never left the node (it stopped on another
 * item's refusal), so they did not run: left behind, a mark would send the event's next run to Uncertain,
 * to a person, for a step that never happened. Only a first start's mark (attempt 1, this claim ID,
 * unfinished): a mark this start did not make is never touched.
 */
export async function unmarkSteps(table: ClaimTable, requests: StepRequest[]): Promise<void> {
	if (requests.length === 0) return;
	await withTransientRetry(
		table.pool,
		(client) =>
			client.query(
				`DELETE FROM ${stepTableRef(table.ref).qualified} AS s ` +
					'USING unnest($1::text[], $2::text[], $3::text[]) AS u(key, step, claim_id) ' +
					'WHERE s.key = u.key AND s.step = u.step AND s.claim_id = u.claim_id ' +
					'AND s.finished_at IS NULL AND s.attempts = 1',
				[
					requests.map((request) => request.key),
					requests.map((request) => request.step),
					requests.map((request) => request.claimId),
				],
			),
		SETTLE_RETRY,
	);
}
