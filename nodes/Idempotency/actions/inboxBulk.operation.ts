import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { inboxBulkProperties } from '../descriptions/inboxBulkProperties';
import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import {
	countMatchingEvents,
	discardMatchingEvents,
	requeueMatchingEvents,
} from '../store/inbox/inboxBulk';
import type { EventFilter, EventState } from '../store/inbox/inboxFilter';
import { CLAIM_ID_COLUMNS } from '../store/table/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readBatchSize } from './parameters/readBatchSize';
import { readSwitch } from './parameters/readSwitch';
import { readCredentials } from './parameters/readCredentials';
import { readEventFilter } from './parameters/readEventFilter';
import { readTableRef } from './parameters/readTableRef';
import { readChoice } from '../../shared/readChoice';

export type BulkOperation = 'requeueEvents' | 'discardEvents';

/**
 * Requeue Kept Events and Discard Kept Events: every dead letter (or due event) a filter matches, in
 * batches, or with Dry Run only counted. Runs once per execution, whatever the input, and outputs one
 * item saying how many.
 */
export async function executeInboxBulk(
	this: IExecuteFunctions,
	operation: BulkOperation,
): Promise<INodeExecutionData[][]> {
	const state = readChoice<EventState>(this, inboxBulkProperties, 'eventState', 0, 'dead');
	const filter: EventFilter = readEventFilter(this, state);
	const batchSize = readBatchSize(this);
	const dryRun = readSwitch(this, 'dryRun', false, 'Dry Run');
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	const needs: TableNeeds = {
		createIfMissing: false,
		columns: CLAIM_ID_COLUMNS,
		privileges: dryRun ? ['SELECT'] : ['SELECT', 'UPDATE'],
		events: true,
	};
	const counted = operation === 'requeueEvents' ? 'requeued' : 'discarded';
	try {
		const table = await openClaimTable(await poolFor(credentials), ref, needs);
		const run = dryRun
			? withCurrentTable(table, needs, (current) => countMatchingEvents(current, filter))
			: withCurrentTable(table, needs, (current) =>
					operation === 'requeueEvents'
						? requeueMatchingEvents(current, filter, batchSize)
						: discardMatchingEvents(current, filter, batchSize),
				);
		const result = await run;
		const json =
			typeof result === 'number'
				? { dryRun: true, matched: result }
				: { dryRun: false, [counted]: result.changed, batches: result.batches };
		return [
			[
				{
					json: {
						operation,
						table: `${ref.schema}.${ref.table}`,
						events: filter.state,
						...json,
					},
					pairedItem: { item: 0 },
				},
			],
		];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
}
