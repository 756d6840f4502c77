import type { ClaimTable } from '../table/claimTable';
import { UNDEFINED_TABLE } from '../table/createOnDemand';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { SETTLE_RETRY } from '../statements/transientErrors';
import { storedClaimId } from '../record/storedValues';
import { stepTableRef } from './stepTable';
import { heldCtes, type StepRequest } from './stepRecord';

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
 * One statement, committed on its own without waiting for its WAL flush (see FINISH_COMMITS_ASYNC).
 */
export async function finishSteps(
	table: ClaimTable,
	requests: FinishRequest[],
): Promise<FinishState[]> {
	if (requests.length === 0) return [];
	const answer = await queryStatementWithRetry<{ held: string[]; finished: string[] }>(
		table.pool,
		namedStatement(finishSql(table)),
		[
			requests.map((request) => request.key),
			requests.map((request) => storedClaimId(table.layout, request.claimId)),
			requests.map((request) => request.step),
			requests.map((request) => request.claimId),
			requests.map((request) => request.result),
		],
		// After the step's side effect: worth riding out a restart, as Complete does.
		SETTLE_RETRY,
	).catch(async (error: unknown) => {
		// No step table: no Start Step ever marked a step beside this claim table, so each item is a Finish
		// without its Start, refused by item, not a missing relation failing the whole batch unnamed. (A
		// claim table gone instead is left to the caller, which reads the table again.)
		if (
			(error as { code?: string } | null)?.code === UNDEFINED_TABLE &&
			!(await stepTableExists(table))
		)
			return undefined;
		throw error;
	});
	if (answer === undefined) return requests.map(() => 'not_started');
	const { value } = answer;
	const held = new Set(value.rows[0].held.map(Number));
	const finished = new Set(value.rows[0].finished.map(Number));
	return requests.map((_, position) =>
		!held.has(position + 1) ? 'not_held' : finished.has(position + 1) ? 'finished' : 'not_started',
	);
}

async function stepTableExists(table: ClaimTable): Promise<boolean> {
	const { rows } = await table.pool.query<{ found: boolean }>(
		'SELECT to_regclass($1) IS NOT NULL AS found',
		[stepTableRef(table.ref).qualified],
	);
	return rows[0].found;
}

/**
 * Finish Step's transaction commits without waiting for its WAL to reach disk (a commit's mode is the
 * setting in effect when it commits). A crash can lose only the result, never the start: Start Step's mark
 * was flushed before the step ran, and WAL is replayed in commit order (PostgreSQL docs, "Asynchronous
 * Commit": a transaction committed after another cannot survive while that one is lost). So a lost Finish
 * leaves the step started and unfinished, which the next run reads as Uncertain (or runs again with the same
 * key, where the service honours it), never as not started. Any later commit that waits, the event's
 * Complete or its next Start Step, writes the Finish's WAL first; left alone, the WAL writer writes it within
 * three wal_writer_delay. `set_config(…, true)` lasts for this statement's own transaction only, so it holds
 * behind a transaction pooler too. test/node/step/stepCrash.test.ts crashes the server to show it.
 */
const FINISH_COMMITS_ASYNC = "set_config('synchronous_commit', 'off', true)";

/**
 * Parameters: $1 keys, $2 claim IDs as stored in the claim table, $3 step names, $4 claim IDs as given,
 * $5 results. One row: the ordinals (from 1) of the held requests, and of those whose step this claim ID
 * started (now finished); the marks are locked in key order.
 */
function finishSql(table: ClaimTable): string {
	const steps = stepTableRef(table.ref).qualified;
	return (
		`WITH u AS (SELECT * FROM unnest($1::text[], $2::${table.layout.claimIdType}[], $3::text[], $4::text[], $5::json[]) ` +
		`WITH ORDINALITY AS u(key, token, step, claim_id, result, n)), ${heldCtes(table)}, ` +
		`marked AS (SELECT s.key, s.step FROM ${steps} AS s JOIN mine ON s.key = mine.key AND s.step = mine.step ` +
		'AND s.claim_id = mine.claim_id ORDER BY s.key COLLATE "C", s.step COLLATE "C" FOR UPDATE OF s), ' +
		`finished AS (UPDATE ${steps} AS s SET finished_at = now(), result = mine.result ` +
		'FROM mine, marked WHERE marked.key = s.key AND marked.step = s.step AND mine.key = s.key AND mine.step = s.step ' +
		'AND s.finished_at IS NULL) ' +
		`SELECT ${FINISH_COMMITS_ASYNC} AS commit_mode, ` +
		'ARRAY(SELECT n FROM mine) AS held, ' +
		'ARRAY(SELECT mine.n FROM mine JOIN marked ON marked.key = mine.key AND marked.step = mine.step) AS finished'
	);
}
