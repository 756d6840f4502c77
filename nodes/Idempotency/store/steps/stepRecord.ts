import { heldSql, mineSql } from '../record/claimConditions';
import type { ClaimTable } from '../table/claimTable';

/** One item's step, named by the event's key, the step's name and the claim ID of the execution asking. */
export interface StepRequest {
	key: string;
	step: string;
	claimId: string;
}

/**
 * What a step's row says to Start Step: `run` (this execution may run it: first time, or again where the
 * service honours the step key), `done` (finished in an earlier run: its result is recorded), `uncertain`
 * (started in an earlier run, no result recorded: it may or may not have happened), `not_held` (this
 * claim ID does not hold the event's claim: taken over, completed, released or never claimed).
 */
export type StepState = 'run' | 'done' | 'uncertain' | 'not_held';

export interface StepRecord {
	state: StepState;
	/** How many times the step was started, this start included where it runs. */
	attempts: number;
	/** Finished steps only: the result Finish Step recorded. */
	result: unknown;
	startedAt: Date | null;
	finishedAt: Date | null;
}

/** The rows a step row's columns are read as (result as its JSON value). */
export interface StepRow {
	attempts: number;
	result: unknown;
	started_at: Date;
	finished_at: Date | null;
}

export function stepRecord(state: StepState, row: StepRow | undefined): StepRecord {
	return {
		state,
		attempts: row?.attempts ?? 0,
		result: row?.finished_at ? row.result : null,
		startedAt: row?.started_at ?? null,
		finishedAt: row?.finished_at ?? null,
	};
}

/**
 * The CTEs `held` and `mine` over an input CTE `u` with columns `key`, `token` (the claim ID as stored) and
 * `n`: `mine` is the rows of `u` whose event's claim their claim ID holds. The claim rows are locked FOR
 * SHARE in key order, so a takeover, Complete or Release of the claim waits until the transaction that
 * asked is over: none slips between the check and what the statement then writes. The
 * claim ID is compared with the locked row as it is now.
 */
export function heldCtes(table: ClaimTable): string {
	return (
		`held AS (SELECT c.key, c.claim_token FROM ${table.ref.qualified} AS c ` +
		`WHERE EXISTS (SELECT 1 FROM u WHERE u.key = c.key AND ${heldSql(table.layout, 'c', 'u.token')}) ` +
		'ORDER BY c.key COLLATE "C" FOR SHARE OF c), ' +
		`mine AS (SELECT u.* FROM u JOIN held AS h ON h.key = u.key AND ${mineSql('h', 'u.token')})`
	);
}
