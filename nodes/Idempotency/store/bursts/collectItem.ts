import type { Pool, PoolClient } from 'pg';

import { ClaimError } from '../../errors';
import { claimStatement } from '../claims/claimSql';
import { mineSql } from '../record/claimConditions';
import { readSingleAnswer } from '../record/claimState';
import { storedClaimId } from '../record/storedValues';
import { inTransaction } from '../statements/inTransaction';
import { namedStatement, queryStatement } from '../statements/namedStatements';
import { withTransientRetry, type RetryBudget } from '../statements/transientErrors';
import type { ClaimTable } from '../table/claimTable';
import type { BurstRules } from './burstRecord';
import type { BurstTables } from './burstTables';

/** What became of one collected item. */
export interface Collected {
	burstId: string;
	/** The item's place in its burst, from 1, in the order items took the burst's row lock. */
	seq: number;
	arrivedAt: Date;
	/**
	 * `holder`: this execution started the burst (or is the first item after a leading one) and runs it
	 * when it ends; `leading`: the item is a burst of its own, running now; `joined`: it joined a burst
	 * another execution holds.
	 */
	role: 'holder' | 'leading' | 'joined' | 'duplicate';
	/** This item filled the burst: it ends now, not at its quiet period's end. */
	filled: boolean;
}

/**
 * Joins the key's open burst or starts one, in one statement. The upsert on the open-burst index takes
 * the burst's row lock; under it the item joins only if the burst is still quiet-period-live and not
 * full (time read then, with clock_timestamp()), restarts the quiet period (never past the maximum wait)
 * and takes the next sequence number; the item's arrival (last_at) is that moment. Its row is written in
 * the same statement, so a holder that ends the burst (it waits for that lock) reads every item that
 * joined before it, and no item after.
 *
 * Trailing: the item that starts a burst holds it (with Max Items 1 it fills it: it ends as it lands).
 * Leading: the item that finds no open burst becomes a running burst of its own and opens an empty one
 * behind it for the quiet period; the first item to join that one holds it.
 */
const collectSql = (t: BurstTables) => `
WITH p AS (
	SELECT g.*, CASE WHEN NOT g.leading AND g.max_items <= 1 THEN g.t ELSE LEAST(g.t + g.quiet, g.t + g.wait) END AS ends
	FROM (SELECT clock_timestamp() AS t, $3::float8 * interval '1 millisecond' AS quiet,
		$4::float8 * interval '1 millisecond' AS wait, $6::float8 * interval '1 millisecond' AS lease,
		$8::boolean AS leading, $5::integer AS max_items) AS g
), burst AS (
	INSERT INTO ${t.bursts} AS b (key, state, edge, holder, item_count, max_items, quiet, lease,
		last_at, quiet_until, closes_by, lease_until)
	SELECT $1::text, 'open', 'trailing', CASE WHEN p.leading THEN NULL ELSE $2::text END,
		CASE WHEN p.leading THEN 0 ELSE 1 END, CASE WHEN p.leading THEN p.max_items - 1 ELSE p.max_items END,
		p.quiet, p.lease, p.t, p.ends, p.t + p.wait, CASE WHEN p.leading THEN NULL ELSE p.ends + p.lease END
	FROM p
	ON CONFLICT (key) WHERE state = 'open' DO UPDATE SET
		item_count = b.item_count + 1,
		holder = COALESCE(b.holder, $2),
		last_at = clock_timestamp(),
		quiet_until = CASE WHEN b.item_count + 1 >= b.max_items THEN clock_timestamp()
			ELSE LEAST(clock_timestamp() + b.quiet, b.closes_by) END,
		lease_until = CASE WHEN b.item_count + 1 >= b.max_items THEN clock_timestamp()
			ELSE LEAST(clock_timestamp() + b.quiet, b.closes_by) END + b.lease
	WHERE b.quiet_until > clock_timestamp() AND b.item_count < b.max_items
	RETURNING b.id, b.item_count, b.max_items, b.holder, b.xmax = 0 AS started, b.last_at
), lead AS (
	INSERT INTO ${t.bursts} (key, state, edge, holder, item_count, max_items, quiet, lease, last_at,
		quiet_until, closes_by, lease_until)
	SELECT $1, 'running', 'leading', $2, 1, 1, p.quiet, p.lease, p.t, p.t, p.t, p.t + p.lease
	FROM burst, p WHERE burst.started AND p.leading
	RETURNING id
), item AS (
	INSERT INTO ${t.items} (burst_id, seq, arrived_at, item)
	SELECT COALESCE(lead.id, burst.id), CASE WHEN lead.id IS NULL THEN burst.item_count ELSE 1 END,
		CASE WHEN lead.id IS NULL THEN burst.last_at ELSE p.t END, $7::json
	FROM p, burst LEFT JOIN lead ON true
	RETURNING burst_id, seq, arrived_at
)
SELECT item.burst_id::text AS burst_id, item.seq, item.arrived_at, lead.id IS NOT NULL AS leading,
	${mineSql('burst', '$2', 'holder')} AS holds, burst.item_count >= burst.max_items AS filled
FROM item, burst LEFT JOIN lead ON true`;

/**
 * Ends the key's open burst that is past its quiet period or full but not yet taken by its holder, so a
 * new one can open: one with items becomes `ended` (its holder, or a takeover, still runs it); an empty
 * one (a leading item's window that no item joined) is deleted.
 */
const endStaleSql = (t: BurstTables) => `
WITH stale AS (
	SELECT id FROM ${t.bursts}
	WHERE key = $1 AND state = 'open' AND (quiet_until <= clock_timestamp() OR item_count >= max_items)
	FOR UPDATE
), emptied AS (
	DELETE FROM ${t.bursts} b USING stale WHERE b.id = stale.id AND b.item_count = 0
)
UPDATE ${t.bursts} b SET state = 'ended' FROM stale WHERE b.id = stale.id AND b.item_count > 0`;

interface CollectRow {
	burst_id: string;
	seq: number;
	arrived_at: Date;
	leading: boolean;
	holds: boolean;
	filled: boolean;
}

/**
 * Each attempt that finds the open burst ended means another item made progress (it filled the burst, or
 * the quiet period passed): with many items racing for small bursts one may lose several times. This many
 * losses in a row is a fault, not a race.
 */
const MAX_ATTEMPTS = 100;

/**
 * A collect answers a waiting webhook, so it rides out only a short blip, as a claim does; and it is sent
 * again only when the failed attempt certainly did nothing: no claim ID tells a second collect of the
 * same item from a new one.
 */
const COLLECT_RETRY: RetryBudget = { totalMs: 8_000, unappliedOnly: true };

/** One item to collect: its burst key, its JSON text, and the claim key of its Item ID (if any). */
export interface CollectedItem {
	key: string;
	itemJson: string;
	itemKey?: string;
}

/**
 * Collects one item under its key for the holder that `claimId` names. With an Item ID, the ID is claimed
 * first through the claim statement (Claim Once, repeats only read) in `itemClaims`, in the same
 * transaction as the item is collected: a redelivered message is kept once, even after its burst ran,
 * until Purge removes the claim. A repeat is `duplicate` and collected nowhere.
 */
export function collectItem(
	pool: Pool,
	tables: BurstTables,
	item: CollectedItem,
	claimId: string,
	rules: BurstRules,
	itemClaims?: ClaimTable,
): Promise<Collected> {
	const { itemKey } = item;
	const collect = (client: PoolClient) => collectOn(pool, client, tables, item, claimId, rules);
	return withTransientRetry(
		pool,
		(client) =>
			itemKey === undefined || !itemClaims
				? collect(client)
				: inTransaction(client, async () =>
						(await claimedOnce(pool, client, itemClaims, itemKey, claimId))
							? collect(client)
							: DUPLICATE,
					),
		COLLECT_RETRY,
	).then(({ value }) => value);
}

const DUPLICATE: Collected = {
	burstId: '',
	seq: 0,
	arrivedAt: new Date(0),
	role: 'duplicate',
	filled: false,
};

/**
 * Claims the item's ID on `client` with the claim statement; true when this statement inserted it. A
 * concurrent collect that inserted it after the statement's snapshot leaves no answer: asked again, the
 * next statement sees its row. An ID already stored, even under this claim ID (a batch that holds the
 * same item twice), is a repeat.
 */
async function claimedOnce(
	pool: Pool,
	client: PoolClient,
	itemClaims: ClaimTable,
	itemKey: string,
	claimId: string,
): Promise<boolean> {
	const statement = claimStatement(itemClaims, { mode: 'readOnly', single: true });
	const values = [itemKey, null, storedClaimId(itemClaims.layout, claimId), null];
	for (let round = 0; round < 3; round++) {
		const { rows } = await queryStatement<{ answer: unknown[] }>(pool, client, statement, values);
		if (rows.length > 0) return readSingleAnswer(rows[0].answer).fresh;
	}
	throw new ClaimError(
		`the item ID "${itemKey}" kept changing under every claim of it; nothing was collected, try again`,
	);
}

/** Collects one item (its JSON text) under its key on `client`: one statement, rarely more. */
async function collectOn(
	pool: Pool,
	client: PoolClient,
	tables: BurstTables,
	{ key, itemJson }: CollectedItem,
	claimId: string,
	rules: BurstRules,
): Promise<Collected> {
	const values = [
		key,
		claimId,
		rules.quietMs,
		rules.maxWaitMs,
		rules.maxItems,
		rules.leaseMs,
		itemJson,
		rules.edge === 'leading',
	];
	for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		const { rows } = await queryStatement<CollectRow>(
			pool,
			client,
			namedStatement(collectSql(tables)),
			values,
		);
		if (rows.length > 0) {
			const [row] = rows;
			return {
				burstId: row.burst_id,
				seq: row.seq,
				arrivedAt: row.arrived_at,
				role: row.leading ? 'leading' : row.holds && row.seq === 1 ? 'holder' : 'joined',
				filled: row.filled && !row.leading,
			};
		}
		// The key's open burst ended (quiet period over, or full) and its holder has not taken it yet.
		await queryStatement(pool, client, namedStatement(endStaleSql(tables)), [key]);
	}
	throw new ClaimError(
		`could not collect an item under burst key "${key}": its open burst ended under it ${MAX_ATTEMPTS} times in a row`,
	);
}
