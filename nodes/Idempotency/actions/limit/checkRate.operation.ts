import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { LONGEST_DURATION_SECONDS } from '../../descriptions/durationLimit';
import { MAX_STARTS_LIMIT } from '../../descriptions/limitProperties';
import { checkRates, type RateRequest } from '../../store/limits/checkRates';
import { newClaimId } from '../../store/record/claimId';
import { failedItem } from '../failures/databaseFailure';
import { readNumber } from '../parameters/readNumber';
import { readCreateTable } from '../parameters/readTableRef';
import { failedOutput, HELD_BACK_OUTPUT, PASSED_OUTPUT, withLimitResult } from './limitOutput';
import { onLimitTables } from './onLimitTables';
import { readLimitKey } from './readLimitKey';

/**
 * Check Rate: each item counts as a start of its Limit Key if fewer than Max Starts started in the last
 * Window (an exact sliding window, by the database's clock): Allowed with `idempotency.rate.startedAt`,
 * or Limited with retryAfterSeconds (until the oldest counted start leaves the window). Every item is
 * read before any is counted, so an item that cannot be read counts nothing, nor do the others.
 */
export async function executeCheckRate(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	if (items.length === 0) return outputs;

	const requests: Array<RateRequest & { index: number }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const maxStarts = readNumber(this.getNodeParameter('maxStarts', index), 'Max Starts', {
				min: 1,
				max: MAX_STARTS_LIMIT,
				integer: true,
			});
			const windowSeconds = readNumber(
				this.getNodeParameter('windowSeconds', index),
				'Window (Seconds)',
				{ min: 0.01, max: LONGEST_DURATION_SECONDS },
			);
			const key = readLimitKey(this, index);
			requests.push({
				index,
				key,
				maxStarts,
				windowMs: windowSeconds * 1000,
				attemptId: newClaimId(),
			});
		} catch (error) {
			const message = itemFailure(this, error, index);
			outputs[failedOutput(this)].push(failedItem(message, 'bad_delivery', index));
		}
	}
	if (requests.length === 0) return outputs;

	const createIfMissing = readCreateTable(this);
	const answers = await onLimitTables(
		this,
		requests.map(({ index }) => index),
		outputs[failedOutput(this)],
		(pool, tables) => checkRates(pool, tables, requests),
		{ createIfMissing, regularOutputIsSafe: true },
	);
	if (!answers) return outputs;
	requests.forEach(({ index, key, maxStarts, windowMs }, position) => {
		const answer = answers[position];
		const rule = { key, maxStarts, windowSeconds: windowMs / 1000 };
		if (answer.allowed)
			outputs[PASSED_OUTPUT].push(
				withLimitResult(
					items[index],
					'rate',
					{ ...rule, allowed: true, startedAt: answer.startedAt.toISOString() },
					index,
				),
			);
		else
			outputs[HELD_BACK_OUTPUT].push(
				withLimitResult(
					items[index],
					'rate',
					{ ...rule, allowed: false, retryAfterSeconds: answer.retryAfterSeconds },
					index,
				),
			);
	});
	return outputs;
}
