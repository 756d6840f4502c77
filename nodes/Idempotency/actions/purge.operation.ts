import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
} from 'n8n-workflow';

import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/claimTable';
import { purgeKeys } from '../store/purgeKeys';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './databaseFailure';
import { readCredentials } from './readCredentials';
import { readNumber } from './readNumber';
import { readTableRef } from './readTableRef';

export const purgeProperties: INodeProperties[] = [
	{
		displayName: 'Older Than (Days)',
		name: 'olderThanDays',
		type: 'number',
		typeOptions: { minValue: 0 },
		default: 30,
		description: 'Delete keys first seen longer ago than this',
		hint: 'Must outlast how long your providers resend: a resend after the purge is processed again. Stripe resends up to 30 days (CLI).',
		displayOptions: { show: { operation: ['purge'] } },
	},
	{
		displayName: 'Batch Size',
		name: 'batchSize',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 100000 },
		default: 10000,
		description: 'Rows per DELETE statement; small batches keep each lock short on big tables',
		displayOptions: { show: { operation: ['purge', 'clearHistory'] } },
	},
];

/** Rows per DELETE statement (Purge's parameter, which Clear Deduplication History shows too). */
export function readBatchSize(context: IExecuteFunctions): number {
	return readNumber(context.getNodeParameter('batchSize', 0, 10000), 'Batch Size', {
		min: 1,
		max: 100000,
		integer: true,
	});
}

/** Runs once per execution, whatever the number of input items, and reports what it removed. */
export async function executePurge(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	let olderThanDays: number;
	let batchSize: number;
	try {
		olderThanDays = readNumber(this.getNodeParameter('olderThanDays', 0, 30), 'Older Than (Days)', {
			min: 0,
		});
		batchSize = readBatchSize(this);
	} catch (error) {
		throw new NodeOperationError(this.getNode(), (error as Error).message);
	}
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	const needs: TableNeeds = { createIfMissing: false, privileges: ['SELECT', 'DELETE'] };
	try {
		const table = await openClaimTable(await poolFor(credentials), ref, needs);
		const result = await withCurrentTable(table, needs, (current) =>
			purgeKeys(current, { olderThanDays, batchSize }),
		);
		return [
			[
				{
					json: {
						table: `${ref.schema}.${ref.table}`,
						deleted: result.deleted,
						batches: result.batches,
						cutoff: result.cutoff.toISOString(),
						olderThanDays,
					},
					pairedItem: { item: 0 },
				},
			],
		];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
}
