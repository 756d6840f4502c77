import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { DEFAULT_MAX_RESULT_KIB, MAX_RESULT_KIB_LIMIT } from '../../descriptions/stepProperties';
import { StepError } from '../../errors';
import { finishSteps, type FinishRequest, type FinishState } from '../../store/steps/finishSteps';
import { openClaimTable, withCurrentTable, type TableNeeds } from '../../store/table/claimTable';
import { CLAIM_ID_COLUMNS } from '../../store/table/tableSchema';
import { stepKey } from '../../step/stepKey';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure, failedItem } from '../failures/databaseFailure';
import { unsharedRequests } from '../failures/sharedByItems';
import { readCredentials } from '../parameters/readCredentials';
import { readEachItem } from '../parameters/readEachItem';
import { readNumber } from '../parameters/readNumber';
import { readTableRef } from '../parameters/readTableRef';
import { readClaimId, readStep } from './readStepItem';
import { itemResultJson, readResultJson } from './readStepResult';
import { stepItem } from './stepOutput';

const FINISH_NEEDS: TableNeeds = {
	createIfMissing: false,
	columns: CLAIM_ID_COLUMNS,
	privileges: ['SELECT', 'UPDATE'],
};

/** After the step succeeded: records its result for the event's later runs, for the claim's holder only. */
export async function executeFinishStep(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const maxResultKib = readNumber(
		this.getNodeParameter('options.maxResultKib', 0, DEFAULT_MAX_RESULT_KIB),
		'Max Result Size (KiB)',
		{ min: 1, max: MAX_RESULT_KIB_LIMIT },
	);
	const { read, failed: out } = readEachItem(this, (index): FinishRequest => {
		const { key, step } = readStep(this, index);
		const claimId = readClaimId(this, index);
		const result =
			this.getNodeParameter('resultSource', index, 'item') === 'custom'
				? readResultJson(this, index)
				: itemResultJson(this, index);
		const bytes = Buffer.byteLength(result, 'utf8');
		if (bytes > maxResultKib * 1024)
			throw new StepError(
				`the result of step "${step}" is ${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes), more than Max Result Size ` +
					`(${maxResultKib} KiB); the step stays started, not finished: record only what later runs need (Result → Custom JSON), or raise the limit`,
			);
		return { key, step, claimId, result };
	});
	// One statement finishes the batch: two results for one step would leave Postgres to record either (a
	// part of the step's answer, split into items), each item saying its own was.
	const requests = unsharedRequests(
		this,
		read,
		(request) => JSON.stringify([request.key, request.step]),
		({ key, step }, indexes) =>
			new StepError(
				`step "${step}" of "${key}" is finished by items ${indexes.join(', ')} of this execution: one ` +
					'result is recorded per step, so none is and the step stays started; merge the items first (an Aggregate node)',
			),
		out,
	);
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	let states: FinishState[];
	try {
		const table = await openClaimTable(
			await poolFor(credentials),
			readTableRef(this),
			FINISH_NEEDS,
		);
		states = await withCurrentTable(table, FINISH_NEEDS, (current) =>
			finishSteps(current, requests),
		);
	} catch (error) {
		const indexes = requests.map((request) => request.index);
		return [[...out, ...databaseFailure(this, error, credentials, indexes, true)]];
	}
	requests.forEach((request, position) => {
		const state = states[position];
		if (state !== 'finished') {
			const refusal = new StepError(
				state === 'not_held'
					? `step "${request.step}" was not finished: the claim of "${request.key}" is not held by this execution's claim ID (taken over, completed or released)`
					: `step "${request.step}" of "${request.key}" was not started by this execution: finish a step on Start Step's Run output only (an Uncertain one is settled with Forget Step)`,
			);
			out.push(
				failedItem(
					itemFailure(this, refusal, request.index),
					state === 'not_held' ? 'not_held' : 'configuration',
					request.index,
				),
			);
			return;
		}
		out.push(
			stepItem(this, request.index, {
				name: request.step,
				key: stepKey(request.key, request.step),
				status: 'finished',
			}),
		);
	});
	return [out];
}
