import type { PoolClient } from 'pg';

import type { ClaimTable } from '../table/claimTable';
import { inTransaction } from '../statements/inTransaction';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { stepTableRef } from './stepTable';
import { heldRequests, type StepRequest } from './stepRecord';

export interface FinishRequest extends StepRequest {
	/** The step's result as JSON text, recorded for the event's later runs. */
	result: string;
}

/**
 * `finished`: the result is recorded (or was already, by this claim's earlier Finish, whose answer was
 * lost: the first result stays); `not_held`: this claim ID does not hold the event's claim; `not_started`:
 * no start of this step by this claim ID is marked (it ran elsewhere, or was forgotten).
 */
export type FinishState = 'finished' | 'not_held' | 'not_started';

/**
 * Records each step's result, for the holder only, under the claim's row lock (so a takeover cannot
 * slip in between), and only on a step this claim ID started: a result is never put on another run's step.
 */
export async function finishSteps(
	table: ClaimTable,
	requests: FinishRequest[],
): Promise<FinishState[]> {
	if (requests.length === 0) return [];
	const { value } = await withTransientRetry(
		table.pool,
		(client) => inTransaction(client, () => finishOn(client, table, requests)),
		// After the step's side effect: worth riding out a restart, as Complete does.
		SETTLE_RETRY,
	);
	return value;
}

async function finishOn(
	client: PoolClient,
	table: ClaimTable,
	requests: FinishRequest[],
): Promise<FinishState[]> {
	const held = await heldRequests(client, table, requests);
	const mine = requests.filter((_, position) => held.has(position));
	if (mine.length === 0) return requests.map(() => 'not_held');
	const { rows } = await client.query<{ n: string }>(
		`WITH u AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::json[]) WITH ORDINALITY AS u(key, step, claim_id, result, n)), ` +
			`marked AS (SELECT s.key, s.step FROM ${stepTableRef(table.ref).qualified} AS s JOIN u ON s.key = u.key AND s.step = u.step ` +
			'AND s.claim_id = u.claim_id ORDER BY s.key COLLATE "C", s.step COLLATE "C" FOR UPDATE OF s), ' +
			`finished AS (UPDATE ${stepTableRef(table.ref).qualified} AS s SET finished_at = now(), result = u.result ` +
			'FROM u, marked WHERE marked.key = s.key AND marked.step = s.step AND u.key = s.key AND u.step = s.step ' +
			'AND s.finished_at IS NULL) ' +
			'SELECT u.n FROM u JOIN marked ON marked.key = u.key AND marked.step = u.step',
		[
			mine.map((request) => request.key),
			mine.map((request) => request.step),
			mine.map((request) => request.claimId),
			mine.map((request) => request.result),
		],
	);
	const finished = new Set(rows.map((row) => mine[Number(row.n) - 1]));
	return requests.map((request, position) =>
		!held.has(position) ? 'not_held' : finished.has(request) ? 'finished' : 'not_started',
	);
}
