import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemMessage, nodeError } from '../../shared/nodeError';
import type { KeepItemsWhere } from '../descriptions/polledItemProperties';
import { advanceWatermark, type WatermarkOutcome } from '../store/watermark/advanceWatermark';
import { checkScopeKeeps } from '../store/claims/scopeHistory';
import { watermarkRef } from '../store/watermark/watermarkTable';
import { scopePrefix } from '../key/scope';
import { poolFor } from '../transport/poolRegistry';
import { markValue, type MarkKind } from '../watermark/markValue';
import { DUPLICATE_OUTPUT, NEW_OUTPUT } from './claimOutputs';
import { newClaimId } from '../store/record/claimId';
import { continuesOnErrorOutput, databaseFailure, failedItem } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readDedupeValue } from './parameters/readDedupeValue';
import { readScope } from './parameters/readScope';
import { readCreateTable, readTableRef } from './parameters/readTableRef';

const KINDS: Record<Exclude<KeepItemsWhere, 'new'>, MarkKind> = { higher: 'number', later: 'date' };

interface Problem {
	index: number;
	error: unknown;
	message: string;
}

/**
 * Value Is Higher / Value Is a Date Later: every item's value is read first, then one statement moves
 * the scope's watermark and says which items pass (New) and which do not (Duplicate). A value that is
 * not a number (or not a date) stops the whole batch before anything is sent: the mark stays where it
 * was, so the next poll brings every item again.
 */
export async function executeWatermark(
	this: IExecuteFunctions,
	keep: Exclude<KeepItemsWhere, 'new'>,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	// A third output exists only while a payload fingerprint is set (hidden here, but it may be left over).
	const outputs: INodeExecutionData[][] =
		this.getNodeParameter('options.payloadFingerprint', 0, 'off') === 'off'
			? [[], []]
			: [[], [], []];
	if (items.length === 0) return outputs;
	const kind = KINDS[keep];
	const ref = readTableRef(this);
	const createIfMissing = readCreateTable(this);

	// A date written without a zone is read in the workflow's, as Remove Duplicates reads it.
	const timeZone = this.getTimezone();
	const values: string[] = [];
	const problems: Problem[] = [];
	let scope = '';
	for (let index = 0; index < items.length; index++) {
		try {
			// One scope for the whole poll (read once): one execution moves one watermark.
			scope = readScope(this, index);
			values.push(markValue(readDedupeValue(this, index), kind, timeZone));
		} catch (error) {
			problems.push({ index, error, message: itemMessage(index, error) });
		}
	}
	if (problems.length > 0) return refuseBatch(this, items, problems, outputs);

	const credentials = await readCredentials(this);
	let outcome: WatermarkOutcome;
	try {
		const pool = await poolFor(credentials);
		const marks = watermarkRef(ref);
		await checkScopeKeeps(pool, ref, marks, scope, scopePrefix(scope), kind);
		outcome = await advanceWatermark(pool, marks, {
			scope,
			kind,
			values,
			claimId: newClaimId(),
			createIfMissing,
		});
	} catch (error) {
		outputs[NEW_OUTPUT].push(
			...databaseFailure(
				this,
				error,
				credentials,
				items.map((_, index) => index),
			),
		);
		return outputs;
	}

	items.forEach((item, index) => {
		const isNew = outcome.passed[index];
		const routed: INodeExecutionData = {
			json: {
				...item.json,
				idempotency: {
					scope,
					keepItemsWhere: keep,
					value: values[index],
					isNew,
					previousMark: outcome.previousMark,
					mark: outcome.mark,
				},
			},
			pairedItem: { item: index },
		};
		if (item.binary) routed.binary = item.binary;
		outputs[isNew ? NEW_OUTPUT : DUPLICATE_OUTPUT].push(routed);
	});
	return outputs;
}

/**
 * No item is compared when one cannot be. Without the error output that is a node error naming the first
 * bad item; with it, every item leaves there, the bad ones saying why and the others that they wait for
 * the next poll.
 */
function refuseBatch(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	problems: Problem[],
	outputs: INodeExecutionData[][],
): INodeExecutionData[][] {
	const [first] = problems;
	if (!continuesOnErrorOutput(context))
		throw nodeError(context.getNode(), first.error, {
			message: first.message,
			itemIndex: first.index,
		});
	const byIndex = new Map(problems.map((problem) => [problem.index, problem.message]));
	const reason = first.message.replace(/^Item \d+: /, '');
	const waiting = `not compared, because item ${first.index} could not be (${reason}); the watermark did not move, so the next poll brings this item again`;
	items.forEach((_, index) =>
		outputs[NEW_OUTPUT].push(
			failedItem(byIndex.get(index) ?? `Item ${index}: ${waiting}`, 'bad_delivery', index),
		),
	);
	return outputs;
}
