import type { Pool, PoolClient } from 'pg';

import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import { UNDEFINED_TABLE } from '../table/createOnDemand';
import type { TableRef } from '../table/tableRef';
import { stepTableRef } from './stepTable';

export interface ForgetRequest {
	key: string;
	step: string;
	/** JSON text to record as the step's result instead (the operator found it done); undefined: forget it. */
	result?: string;
}

/** `forgotten`: the mark is gone, the next run runs the step; `recorded`: it is done with the given result; `not_found`: no mark (nothing recorded). */
export type ForgetState = 'forgotten' | 'recorded' | 'not_found';

/**
 * For an operator, after checking an uncertain step by hand: deletes its mark, so the event's next run
 * runs it (as its first attempt), or records the result found, so the next run takes Done. Whoever holds
 * the claim: an operator holds none. One statement per item: an operator's handful, not a batch. Each
 * commits on its own, so a failure stops there and comes back with the states of the ones before it,
 * which are done: they must not be reported failed.
 */
export async function forgetSteps(
	pool: Pool,
	claimTable: TableRef,
	requests: ForgetRequest[],
): Promise<{ states: ForgetState[]; failure?: unknown }> {
	const steps = stepTableRef(claimTable).qualified;
	const states: ForgetState[] = [];
	for (const request of requests) {
		const run = (client: PoolClient) =>
			request.result === undefined
				? client.query(`DELETE FROM ${steps} WHERE key = $1 AND step = $2`, [
						request.key,
						request.step,
					])
				: // Only on a mark a run made: a mistyped key or step name would otherwise record a step no run
					// asks for, reported as recorded while the event's own step stays Uncertain.
					client.query(
						`UPDATE ${steps} SET finished_at = now(), result = $3::json, claim_id = NULL WHERE key = $1 AND step = $2`,
						[request.key, request.step, request.result],
					);
		let changed = 0;
		let failure: unknown;
		try {
			changed = (await withTransientRetry(pool, run, SETTLE_RETRY)).value.rowCount ?? 0;
		} catch (error) {
			failure = error;
		}
		// A step table never made holds no mark to forget or record.
		const noTable = (failure as { code?: string } | undefined)?.code === UNDEFINED_TABLE;
		if (failure !== undefined && !noTable) return { states, failure };
		states.push(
			changed === 0 ? 'not_found' : request.result !== undefined ? 'recorded' : 'forgotten',
		);
	}
	return { states };
}
