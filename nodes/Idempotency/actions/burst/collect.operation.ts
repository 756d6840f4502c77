import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../../shared/nodeError';
import { MappedValueError } from '../../errors';
import { idValueToString, storableKeyValue } from '../../key/deriveKey';
import { BURST_ITEM_KEY_PREFIX } from '../../key/scope';
import type { Burst } from '../../store/bursts/burstRecord';
import { burstTables, withBurstTables } from '../../store/bursts/burstTables';
import { collectItem, type Collected } from '../../store/bursts/collectItem';
import { takeHeldBursts, type HeldBurst } from '../../store/bursts/takeHeldBursts';
import { signalSettled } from '../../store/claims/settleSignals';
import { openClaimTable } from '../../store/table/claimTable';
import { newClaimId } from '../../store/record/claimId';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure, failedItem } from '../failures/databaseFailure';
import { readSwitch } from '../parameters/readSwitch';
import { readCredentials } from '../parameters/readCredentials';
import { readCreateTable, readTableRef } from '../parameters/readTableRef';
import { BURST_OUTPUT, burstItem, failedOutput, JOINED_OUTPUT } from './burstOutput';
import { readBurstRules } from './readBurstRules';

/**
 * Collect: each item joins the open burst of its key or starts one (one statement each, in input order).
 * Items that joined another execution's burst leave on Joined at once. The bursts this execution started
 * are waited for (a look at each quiet period's end, no connection held between) and leave on Burst,
 * one item each with all their items in arrival order, together with any burst of the same key whose
 * holder died (its lease ran out).
 */
export async function executeCollect(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	if (items.length === 0) return outputs;
	const rules = readBurstRules(this);
	const ref = readTableRef(this);
	const tables = burstTables(ref);
	const createTable = readCreateTable(this);
	const answerWhenStored = readSwitch(
		this,
		'options.answerWhenStored',
		false,
		'Answer the Webhook Once Stored',
	);
	// On when the option is set in the node (its text, an expression as typed), not when item 0's value is
	// not empty: an item whose ID is empty is refused, not collected unchecked with the rest of its batch.
	const itemIdOption = (this.getNode().parameters.options as IDataObject | undefined)?.itemId;
	const deduplicates = itemIdOption !== undefined && itemIdOption !== '';

	const keyed: Array<{ index: number; key: string; itemKey?: string }> = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const value = idValueToString(this.getNodeParameter('burstKey', index), 'the burst key');
			if (value === undefined) throw new MappedValueError('the burst key is empty');
			const key = storableKeyValue(value);
			let itemKey: string | undefined;
			if (deduplicates) {
				const id = idValueToString(this.getNodeParameter('options.itemId', index), 'the item ID');
				if (id === undefined) throw new MappedValueError('the item ID is empty');
				// Unambiguous whatever the key and the ID contain.
				itemKey = `${BURST_ITEM_KEY_PREFIX}:${storableKeyValue(JSON.stringify([key, id]))}`;
			}
			keyed.push({ index, key, itemKey });
		} catch (error) {
			const message = itemFailure(this, error, index);
			outputs[failedOutput(this)].push(failedItem(message, 'bad_delivery', index));
		}
	}
	if (keyed.length === 0) return outputs;

	const credentials = await readCredentials(this);
	const claimId = newClaimId();
	let held: HeldBurst[];
	let bursts: Array<{ burst: Burst; index: number }>;
	// Leave on Joined only once the execution succeeded: after a failure every item leaves failed, once.
	const joined: INodeExecutionData[] = [];
	try {
		const pool = await poolFor(credentials);
		const itemClaims = deduplicates
			? await openClaimTable(pool, ref, {
					createIfMissing: createTable,
					privileges: ['SELECT', 'INSERT'],
				})
			: undefined;
		held = [];
		for (const { index, key, itemKey } of keyed) {
			const item = { key, itemJson: JSON.stringify(items[index].json), itemKey };
			const collected = await withBurstTables(pool, tables, createTable, () =>
				collectItem(pool, tables, item, claimId, rules, itemClaims),
			);
			// Its holder, if it waits in this process, looks at once.
			if (collected.filled) signalSettled(tables.bursts, [collected.burstId]);
			if (collected.role === 'duplicate') {
				joined.push(duplicateItem(items[index], key, index));
			} else if (collected.role === 'joined') {
				joined.push(joinedItem(items[index], key, collected, index));
			} else held.push({ index, key, collected });
		}
		if (answerWhenStored)
			await this.sendResponse({ statusCode: 200, body: { status: 'received' } });
		const cancelled = this.getExecutionCancelSignal?.();
		bursts = await takeHeldBursts(pool, tables, claimId, rules.leaseMs, held, cancelled);
	} catch (error) {
		outputs[failedOutput(this)].push(
			...databaseFailure(
				this,
				error,
				credentials,
				keyed.map(({ index }) => index),
				// failedOutput keeps a failed item from the work under either Continue setting.
				true,
			),
		);
		return outputs;
	}
	outputs[JOINED_OUTPUT].push(...joined);
	for (const { burst, index } of bursts) outputs[BURST_OUTPUT].push(burstItem(burst, index));
	// A holder whose burst was taken over (it looked too late) has nothing to run; its item is in that burst.
	const ran = new Set(bursts.map(({ burst }) => burst.id));
	for (const { index, key, collected } of held)
		if (!ran.has(collected.burstId))
			outputs[JOINED_OUTPUT].push(joinedItem(items[index], key, collected, index, true));
	return outputs;
}

function joinedItem(
	source: INodeExecutionData,
	key: string,
	collected: Collected,
	index: number,
	takenOver = false,
): INodeExecutionData {
	const item: INodeExecutionData = {
		json: {
			...source.json,
			burst: {
				id: collected.burstId,
				key,
				seq: collected.seq,
				arrivedAt: collected.arrivedAt.toISOString(),
				joined: true,
				...(takenOver ? { takenOver: true } : {}),
			},
		},
		pairedItem: { item: index },
	};
	if (source.binary) item.binary = source.binary;
	return item;
}

/** A redelivered item (its Item ID was collected before): collected nowhere, it leaves on Joined. */
function duplicateItem(source: INodeExecutionData, key: string, index: number): INodeExecutionData {
	const item: INodeExecutionData = {
		json: { ...source.json, burst: { id: null, key, joined: false, duplicate: true } },
		pairedItem: { item: index },
	};
	if (source.binary) item.binary = source.binary;
	return item;
}
