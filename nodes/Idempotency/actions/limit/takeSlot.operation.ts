import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { readChoice } from '../../../shared/readChoice';
import { LONGEST_DURATION_SECONDS } from '../../descriptions/durationLimit';
import {
	limitProperties,
	MAX_AT_ONCE_LIMIT,
	MAX_WAIT_LIMIT_SECONDS,
	type WhenNoSlot,
} from '../../descriptions/limitProperties';
import type { SlotRequest } from '../../store/limits/takeSlot';
import { takeSlots } from '../../store/limits/waitForSlots';
import { newClaimId } from '../../store/record/claimId';
import { failedItem } from '../failures/databaseFailure';
import { readNumber } from '../parameters/readNumber';
import { readCreateTable } from '../parameters/readTableRef';
import { failedOutput, HELD_BACK_OUTPUT, PASSED_OUTPUT, withLimitResult } from './limitOutput';
import { onLimitTables } from './onLimitTables';
import { readLimitKey } from './readLimitKey';

/**
 * Take Slot: each item takes a slot of its Limit Key (at most Max at Once holders per key) for its Slot
 * Lease, and leaves on Got Slot with `idempotency.slot` (key, slotId, leaseUntil), or on No Slot with
 * retryAfterSeconds: at once, or after waiting up to Max Wait (no connection held between looks). Every
 * item's key, Max at Once and Slot Lease are read before any slot is taken, so an item that cannot be
 * read takes nothing, nor do the others.
 */
export async function executeTakeSlot(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	if (items.length === 0) return outputs;
	const whenNoSlot = readChoice<WhenNoSlot>(this, limitProperties, 'whenNoSlot', 0, 'leave');
	const waitMs =
		whenNoSlot === 'wait'
			? readNumber(this.getNodeParameter('maxWaitSeconds', 0, 10), 'Max Wait (Seconds)', {
					min: 0.01,
					max: MAX_WAIT_LIMIT_SECONDS,
				}) * 1000
			: 0;

	const requests: Array<SlotRequest & { index: number }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const maxAtOnce = readNumber(this.getNodeParameter('maxAtOnce', index), 'Max at Once', {
				min: 1,
				max: MAX_AT_ONCE_LIMIT,
				integer: true,
			});
			// Per item, as Max at Once: an expression may give a slow item a longer lease.
			const leaseSeconds = readNumber(
				this.getNodeParameter('slotLeaseSeconds', index, 300),
				'Slot Lease (Seconds)',
				{ min: 1, max: LONGEST_DURATION_SECONDS },
			);
			const key = readLimitKey(this, index);
			requests.push({ index, key, maxAtOnce, slotId: newClaimId(), leaseMs: leaseSeconds * 1000 });
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
		(pool, tables) => takeSlots(pool, tables, requests, waitMs, this.getExecutionCancelSignal?.()),
		{ createIfMissing, regularOutputIsSafe: true },
	);
	if (!answers) return outputs;
	requests.forEach(({ index, key, slotId }, position) => {
		const answer = answers[position];
		if (answer.taken)
			outputs[PASSED_OUTPUT].push(
				withLimitResult(
					items[index],
					'slot',
					{ key, slotId, leaseUntil: answer.leaseUntil.toISOString() },
					index,
				),
			);
		else
			outputs[HELD_BACK_OUTPUT].push(
				withLimitResult(
					items[index],
					'slot',
					{ key, slotId: null, retryAfterSeconds: answer.retryAfterSeconds },
					index,
				),
			);
	});
	return outputs;
}
