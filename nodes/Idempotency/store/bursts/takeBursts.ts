import type { Pool, QueryResultRow } from 'pg';

import { DB_LIVE_NOW, leaseEndedSql, mineSql } from '../record/claimConditions';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import type { RetryBudget } from '../statements/transientErrors';
import { TAKEN_COLUMNS, type Burst, type TakenRow } from './burstRecord';
import type { BurstTables } from './burstTables';

/**
 * A take or a read that fails for a moment (a restart, a failover) is sent again for up to this long. A
 * take whose answer was lost holds its bursts for a lease unseen; then they are due again, as any burst
 * whose holder died.
 */
const TAKE_RETRY: RetryBudget = { totalMs: 60_000 };

async function query<R extends QueryResultRow>(pool: Pool, text: string, values: unknown[]) {
	return (await queryStatementWithRetry<R>(pool, namedStatement(text), values, TAKE_RETRY)).value;
}

/**
 * Takes over bursts whose lease ran out (open or ended ones whose holder never took them, running ones
 * never completed), oldest first, for the holder `$1`; rows another statement has locked are skipped, so
 * two flushes at once take different bursts. `$4` limits it to one key, `$5` to keys with that prefix.
 */
const takeDueSql = (t: BurstTables) => `
WITH due AS (
	SELECT id FROM ${t.bursts} d
	WHERE ${leaseEndedSql('d', DB_LIVE_NOW)} AND item_count > 0 AND ($4::text IS NULL OR key = $4)
		AND ($5::text IS NULL OR starts_with(key, $5))
	ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED
)
UPDATE ${t.bursts} b SET state = 'running', holder = $1, takeovers = b.takeovers + 1,
	lease_until = ${DB_LIVE_NOW} + $2::float8 * interval '1 millisecond'
FROM due WHERE b.id = due.id
RETURNING ${TAKEN_COLUMNS}`;

/** A leading item's window that no item joined, once it is over: nothing to run, so it goes. */
const dropEmptySql = (t: BurstTables) =>
	`DELETE FROM ${t.bursts} WHERE item_count = 0 AND state <> 'running' AND quiet_until <= clock_timestamp()`;

export async function takeDueBursts(
	pool: Pool,
	tables: BurstTables,
	claimId: string,
	leaseMs: number,
	limit: number,
	only: { key?: string; keyPrefix?: string } = {},
): Promise<TakenRow[]> {
	const { rows } = await query<TakenRow>(pool, takeDueSql(tables), [
		claimId,
		leaseMs,
		limit,
		only.key ?? null,
		only.keyPrefix ?? null,
	]);
	return rows.sort((a, b) => Number(a.id) - Number(b.id));
}

export async function dropEmptyWindows(pool: Pool, tables: BurstTables): Promise<number> {
	return (await query(pool, dropEmptySql(tables), [])).rowCount ?? 0;
}

/** A burst this holder already runs (a leading item's), as the statements that take one return it. */
export async function heldBurst(
	pool: Pool,
	tables: BurstTables,
	burstId: string,
	claimId: string,
): Promise<TakenRow | undefined> {
	const { rows } = await query<TakenRow>(
		pool,
		`SELECT ${TAKEN_COLUMNS} FROM ${tables.bursts} b WHERE b.id = $1 AND ${mineSql('b', '$2', 'holder')}`,
		[burstId, claimId],
	);
	return rows[0];
}

interface ItemRow {
	burst_id: string;
	arrived_at: Date;
	item: unknown;
}

/**
 * The items of bursts just taken, in arrival order, in one statement. It must come after the statement
 * that took them: that one waited for every item that joined before it to commit, and a read in its own
 * snapshot could miss the last of them.
 */
export async function withItems(
	pool: Pool,
	tables: BurstTables,
	taken: TakenRow[],
): Promise<Burst[]> {
	if (taken.length === 0) return [];
	const { rows } = await query<ItemRow>(
		pool,
		`SELECT burst_id::text AS burst_id, arrived_at, item FROM ${tables.items} ` +
			'WHERE burst_id = ANY($1::bigint[]) ORDER BY burst_id, seq',
		[taken.map((row) => row.id)],
	);
	const byBurst = new Map<string, ItemRow[]>();
	for (const row of rows) {
		let list = byBurst.get(row.burst_id);
		if (!list) byBurst.set(row.burst_id, (list = []));
		list.push(row);
	}
	return taken.map((row) => {
		const items = byBurst.get(row.id) ?? [];
		return {
			id: row.id,
			key: row.key,
			claimId: row.holder,
			edge: row.edge,
			endedBy: row.ended_by,
			openedAt: row.opened_at,
			endedAt: row.quiet_until,
			leaseUntil: row.lease_until,
			takeovers: row.takeovers,
			items: items.map((item) => item.item),
			arrivedAt: items.map((item) => item.arrived_at),
		};
	});
}
