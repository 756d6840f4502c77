import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { MappedValueError } from '../../errors';
import { idValueToString } from '../../key/deriveKey';
import { freeSlots } from '../../store/limits/freeSlots';
import { failedItem } from '../failures/databaseFailure';
import { withLimitResult } from './limitOutput';
import { onLimitTables } from './onLimitTables';

/**
 * Free Slot: gives back the slots the items' Slot IDs hold, in one statement. Each item passes on with
 * `idempotency.slot.freed`: false when the slot was no longer this holder's (its lease ended and another
 * item took it, or it was freed already), in which case nothing was freed.
 */
export async function executeFreeSlot(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const out: INodeExecutionData[] = [];
	const held: Array<{ index: number; slotId: string }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const slotId = idValueToString(this.getNodeParameter('slotId', index), 'the slot ID');
			if (slotId === undefined)
				throw new MappedValueError(
					'the slot ID is empty; map idempotency.slot.slotId from the Take Slot output',
				);
			held.push({ index, slotId });
		} catch (error) {
			out.push(failedItem(itemFailure(this, error, index), 'configuration', index));
		}
	}
	if (held.length === 0) return [out];

	const freed = await onLimitTables(
		this,
		held.map(({ index }) => index),
		out,
		(pool, tables) =>
			freeSlots(
				pool,
				tables,
				held.map(({ slotId }) => slotId),
			),
		{
			createIfMissing: false,
			regularOutputIsSafe: false,
			// Created, they would hold no slot to free: the Schema or Table is not its Take Slot's.
			whenMissing:
				'no slot was taken in them; give Free Slot the same Schema and Table as the Take Slot it frees',
		},
	);
	if (!freed) return [out];
	held.forEach(({ index, slotId }, position) => {
		const previous = ((items[index].json.idempotency as Record<string, unknown> | undefined)
			?.slot ?? {}) as Record<string, unknown>;
		out.push(
			withLimitResult(items[index], 'slot', { ...previous, slotId, freed: freed[position] }, index),
		);
	});
	return [out];
}
