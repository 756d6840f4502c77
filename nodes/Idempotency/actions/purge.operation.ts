import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import { purgeKeys } from '../store/claims/purgeKeys';
import { limitTables } from '../store/limits/limitTables';
import { purgeLimits } from '../store/limits/purgeLimits';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readBatchSize } from './parameters/readBatchSize';
import { readSwitch } from './parameters/readSwitch';
import { readNumber } from './parameters/readNumber';
import { readTableRef } from './parameters/readTableRef';

/**
 * Runs once per execution, whatever the number of input items, and reports what it removed: old keys of
 * the claim table, and the rows of the limit tables beside it (Idempotency Limit) idle since the same cutoff.
 */
export async function executePurge(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const includeDeadLetters = readSwitch(
		this,
		'includeDeadLetters',
		false,
		'Delete Old Dead Letters',
	);
	const olderThanDays = readNumber(
		this.getNodeParameter('olderThanDays', 0, 30),
		'Older Than (Days)',
		// A hundred years: far more would put the cutoff before the first timestamp Postgres holds.
		{ min: 0, max: 36_500 },
	);
	const batchSize = readBatchSize(this);
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	// Read afresh: a cached picture that predates the event table would not know which claims keep events.
	const needs: TableNeeds = {
		createIfMissing: false,
		privileges: ['SELECT', 'DELETE'],
		fresh: true,
	};
	try {
		const pool = await poolFor(credentials);
		const table = await openClaimTable(pool, ref, needs);
		const result = await withCurrentTable(table, needs, (current) =>
			purgeKeys(current, { olderThanDays, batchSize, includeDeadLetters }),
		);
		const limits = await purgeLimits(pool, limitTables(ref), {
			cutoff: result.cutoff,
			batchSize,
		});
		return [
			[
				{
					json: {
						table: `${ref.schema}.${ref.table}`,
						deleted: result.deleted,
						batches: result.batches,
						cutoff: result.cutoff.toISOString(),
						olderThanDays,
						includeDeadLetters,
						limitRowsDeleted: limits,
					},
					pairedItem: { item: 0 },
				},
			],
		];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
}
