import type { Pool } from 'pg';

import type { BurstRules } from '../../nodes/Idempotency/store/bursts/burstRecord';
import {
	burstTables,
	withBurstTables,
	type BurstTables,
} from '../../nodes/Idempotency/store/bursts/burstTables';
import { collectItem, type Collected } from '../../nodes/Idempotency/store/bursts/collectItem';
import { tableRef } from '../../nodes/Idempotency/store/table/tableRef';
import { uniqueTableName } from './database';

/**
 * Rules whose times decide nothing during a test: a quiet period, maximum wait and lease of an hour, so
 * a burst ends only when a test fills it or sets a time of zero (already past when the next statement
 * reads the clock). No test waits for real time to pass.
 */
export const HOUR_RULES: BurstRules = {
	edge: 'trailing',
	quietMs: 3_600_000,
	maxWaitMs: 3_600_000,
	maxItems: 50,
	leaseMs: 3_600_000,
};

/** The burst tables of a fresh claim table's name (created by the first collect), and a collect bound to them. */
export function freshBurstTables(pool: Pool) {
	const table = uniqueTableName('bursts');
	const tables = burstTables(tableRef('public', table));
	const collect = (
		key: string,
		item: unknown,
		claimId: string,
		rules: Partial<BurstRules> = {},
	): Promise<Collected> =>
		withBurstTables(pool, tables, true, () =>
			collectItem(pool, tables, { key, itemJson: JSON.stringify(item) }, claimId, {
				...HOUR_RULES,
				...rules,
			}),
		);
	return { table, tables, collect };
}

/** A burst's row as the tables hold it. */
export async function burstRow(pool: Pool, tables: BurstTables, id: string) {
	const { rows } = await pool.query<{
		state: string;
		holder: string | null;
		item_count: number;
		takeovers: number;
		lease_due: boolean;
	}>(
		`SELECT state, holder, item_count, takeovers, lease_until <= clock_timestamp() AS lease_due
		 FROM ${tables.bursts} WHERE id = $1`,
		[id],
	);
	return rows[0];
}
