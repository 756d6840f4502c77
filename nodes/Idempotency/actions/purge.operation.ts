import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData, type INodeProperties } from 'n8n-workflow';

import { openClaimTable } from '../store/claimTable';
import { purgeKeys } from '../store/purgeKeys';
import { databaseFailure } from './databaseFailure';
import { readCredentials } from './readCredentials';
import { readTableRef } from './readTableSettings';

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
		displayOptions: { show: { operation: ['purge'] } },
	},
];

/** Runs once per execution, whatever the number of input items, and reports what it removed. */
export async function executePurge(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const olderThanDays = this.getNodeParameter('olderThanDays', 0, 30) as number;
	const batchSize = this.getNodeParameter('batchSize', 0, 10000) as number;
	if (!(olderThanDays >= 0) || !Number.isFinite(olderThanDays)) {
		throw new NodeOperationError(this.getNode(), `Older Than (Days) must be 0 or more, got ${olderThanDays}`);
	}
	if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100000) {
		throw new NodeOperationError(this.getNode(), `Batch Size must be a whole number from 1 to 100000, got ${batchSize}`);
	}
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	try {
		const table = await openClaimTable(credentials, ref, false);
		const result = await purgeKeys(table.pool, ref, { olderThanDays, batchSize });
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
		return [databaseFailure(this, error, credentials, [0])];
	}
}
