import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { forgetSteps, type ForgetRequest, type ForgetState } from '../../store/steps/forgetSteps';
import { stepKey } from '../../step/stepKey';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure } from '../failures/databaseFailure';
import { readCredentials } from '../parameters/readCredentials';
import { readEachItem } from '../parameters/readEachItem';
import { readTableRef } from '../parameters/readTableRef';
import { readStep } from './readStepItem';
import { readResultJson } from './readStepResult';

/**
 * For an operator who checked an Uncertain step by hand: clears its mark, so the event's next run runs it,
 * or records the result found, so the next run takes Done. Acts whoever holds the claim.
 */
export async function executeForgetStep(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const { read: requests, failed: out } = readEachItem(this, (index): ForgetRequest => {
		const { key, step } = readStep(this, index);
		const recording = this.getNodeParameter('recordResult', index, false) === true;
		return { key, step, result: recording ? readResultJson(this, index) : undefined };
	});
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	let states: ForgetState[];
	let failure: unknown;
	try {
		({ states, failure } = await forgetSteps(
			await poolFor(credentials),
			readTableRef(this),
			requests,
		));
	} catch (error) {
		states = [];
		failure = error;
	}
	// The items before a failure were forgotten or recorded (each commits on its own): they go out as such.
	const unsettled = requests.slice(states.length).map((request) => request.index);
	const failed =
		failure === undefined ? [] : databaseFailure(this, failure, credentials, unsettled, true);
	requests.slice(0, states.length).forEach((request, position) => {
		const source = items[request.index];
		out.push({
			json: {
				...source.json,
				idempotency: {
					...((source.json.idempotency ?? {}) as object),
					key: request.key,
					step: {
						name: request.step,
						key: stepKey(request.key, request.step),
						// forgotten (the next run runs it), recorded (the next run takes Done), or not_found.
						status: states[position],
					},
				},
			},
			pairedItem: { item: request.index },
		});
	});
	return [[...out, ...failed]];
}
