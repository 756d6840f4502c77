import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { StepError } from '../../errors';
import { startSteps } from '../../store/steps/startSteps';
import type { StepRecord, StepRequest } from '../../store/steps/stepRecord';
import { withStepTable } from '../../store/steps/stepTableOnDemand';
import { unmarkSteps } from '../../store/steps/unmarkSteps';
import { openClaimTable, withCurrentTable, type TableNeeds } from '../../store/table/claimTable';
import { CLAIM_ID_COLUMNS } from '../../store/table/tableSchema';
import { stepKey } from '../../step/stepKey';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure, failedItem } from '../failures/databaseFailure';
import { readSwitch } from '../parameters/readSwitch';
import { readCredentials } from '../parameters/readCredentials';
import { readEachItem } from '../parameters/readEachItem';
import { readCreateTable, readTableRef } from '../parameters/readTableRef';
import { readClaimId, readStep } from './readStepItem';
import { DONE_OUTPUT, failedOutput, RUN_OUTPUT, stepItem, UNCERTAIN_OUTPUT } from './stepOutput';

/** The claim rows are locked FOR SHARE while a step is marked, which Postgres allows with UPDATE only. */
const START_NEEDS: TableNeeds = {
	createIfMissing: false,
	columns: CLAIM_ID_COLUMNS,
	privileges: ['SELECT', 'UPDATE'],
};

const OUTPUT_OF = { run: RUN_OUTPUT, done: DONE_OUTPUT, uncertain: UNCERTAIN_OUTPUT };

/**
 * Before a side effect outside Postgres: each item leaves on Run (the step may run now), Done (it finished
 * in an earlier run of the event: the result recorded then) or Uncertain (an earlier run started it and
 * recorded no result: it may have happened; never run again silently).
 */
export async function executeStartStep(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const outputs: INodeExecutionData[][] = [[], [], []];
	const failed = outputs[failedOutput(this)];
	const serviceHonoursKey = readSwitch(
		this,
		'options.serviceHonoursKey',
		false,
		'Service Honours the Key',
	);
	const createTable = readCreateTable(this);
	const firstItemOf = new Map<string, number>();
	const { read: requests, failed: unread } = readEachItem(this, (index): StepRequest => {
		const { key, step } = readStep(this, index);
		const claimId = readClaimId(this, index);
		const pair = JSON.stringify([key, step]);
		const first = firstItemOf.get(pair);
		if (first !== undefined)
			throw new StepError(
				`step "${step}" of "${key}" is started twice in this execution (item ${first} starts it too): give each step of an event its own Step Name`,
			);
		firstItemOf.set(pair, index);
		return { key, step, claimId };
	});
	failed.push(...unread);
	if (requests.length === 0) return outputs;

	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	let records: StepRecord[];
	try {
		const pool = await poolFor(credentials);
		const table = await openClaimTable(pool, ref, START_NEEDS);
		records = await withCurrentTable(table, START_NEEDS, async (current) => {
			const started = await withStepTable(pool, ref, createTable, () =>
				startSteps(current, requests, { serviceHonoursKey }),
			);
			// Without a Continue setting a refused item stops the node below, so no Run leaves it: the steps
			// this start marked did not run, and their marks go.
			if (!this.continueOnFail() && started.some((record) => record.state === 'not_held'))
				await unmarkSteps(
					current,
					requests.filter((_, at) => started[at].state === 'run' && started[at].attempts === 1),
				);
			return started;
		});
		// A step table this picture of the claim table did not know of (just made, here or elsewhere): read
		// the table again, so this process's Complete deletes the marks with the claim.
		if (!table.capabilities.steps) await openClaimTable(pool, ref, { ...START_NEEDS, fresh: true });
	} catch (error) {
		const indexes = requests.map((request) => request.index);
		failed.push(...databaseFailure(this, error, credentials, indexes, true));
		return outputs;
	}
	requests.forEach((request, position) => {
		const { state, attempts, result, startedAt, finishedAt } = records[position];
		if (state === 'not_held') {
			const notHeld = new StepError(
				`step "${request.step}" was not started: the claim of "${request.key}" is not held by this execution's claim ID ` +
					'(taken over by another run after its lease ended, completed, released, or never claimed with a lease), so this run must not act for the event',
			);
			failed.push(failedItem(itemFailure(this, notHeld, request.index), 'not_held', request.index));
			return;
		}
		outputs[OUTPUT_OF[state]].push(
			stepItem(this, request.index, {
				name: request.step,
				key: stepKey(request.key, request.step),
				attempt: attempts,
				status: state,
				startedAt: startedAt?.toISOString() ?? null,
				...(state === 'done'
					? { finishedAt: finishedAt?.toISOString() ?? null, result: result as IDataObject }
					: {}),
			}),
		);
	});
	return outputs;
}
