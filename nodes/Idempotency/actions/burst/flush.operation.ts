import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { burstTables, withBurstTables } from '../../store/bursts/burstTables';
import { dropEmptyWindows, takeDueBursts, withItems } from '../../store/bursts/takeBursts';
import { newClaimId } from '../../store/record/claimId';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure } from '../failures/databaseFailure';
import { readCredentials } from '../parameters/readCredentials';
import { readNumber } from '../parameters/readNumber';
import { readCreateTable, readTableRef } from '../parameters/readTableRef';
import { burstItem } from './burstOutput';
import { readLeaseMs } from './readBurstRules';

/**
 * Flush Due Bursts, for a scheduled workflow: takes over the bursts whose lease ran out (their holder
 * died before running them, or the work never completed) and outputs each as Collect does, with a new
 * claim ID; with a Burst Key Prefix, only bursts whose key starts with it. Runs once per execution, whatever
 * the number of input items.
 */
export async function executeFlush(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const leaseMs = readLeaseMs(this);
	const keyPrefix = String(this.getNodeParameter('burstKeyPrefix', 0, '') ?? '');
	const limit = readNumber(this.getNodeParameter('maxBursts', 0, 100), 'Max Bursts', {
		min: 1,
		max: 1000,
		integer: true,
	});
	const tables = burstTables(readTableRef(this));
	const createTable = readCreateTable(this);
	const credentials = await readCredentials(this);
	try {
		const pool = await poolFor(credentials);
		const bursts = await withBurstTables(pool, tables, createTable, async () => {
			await dropEmptyWindows(pool, tables);
			return withItems(
				pool,
				tables,
				await takeDueBursts(pool, tables, newClaimId(), leaseMs, limit, {
					keyPrefix: keyPrefix === '' ? undefined : keyPrefix,
				}),
			);
		});
		return [bursts.map((burst) => burstItem(burst, 0))];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0])];
	}
}
