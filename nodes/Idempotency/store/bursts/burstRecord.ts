/**
 * A burst from the store to the node's output: one type, so the collecting execution, a takeover and
 * Flush Due Bursts all hand the work the same thing.
 */

/** Trailing: the work runs when the burst has been quiet. Leading: the first item runs at once, alone. */
export type BurstEdge = 'trailing' | 'leading';

/** Why a burst ended: its quiet period passed, its maximum wait or item count was reached, or it was a leading item. */
export type BurstEnd = 'quiet' | 'maxWait' | 'maxItems' | 'leading';

/** How items are collected under one key (the node's parameters, in milliseconds). */
export interface BurstRules {
	edge: BurstEdge;
	quietMs: number;
	maxWaitMs: number;
	maxItems: number;
	/** How long the holder may take, after the burst ended, before another execution may take it over. */
	leaseMs: number;
}

/** A burst an execution now holds and runs: every item it collected, in arrival order. */
export interface Burst {
	id: string;
	key: string;
	/** The holder's claim ID: Complete and Release need it, so only the holder settles its burst. */
	claimId: string;
	edge: BurstEdge;
	endedBy: BurstEnd;
	openedAt: Date;
	/** When the burst ended: its quiet period's end (or when it filled up). */
	endedAt: Date;
	leaseUntil: Date;
	/** How many times another execution took the burst over from a holder that died or was too slow. */
	takeovers: number;
	items: unknown[];
	arrivedAt: Date[];
}

/** A burst row as the statements that take one return it (items are read after). */
export interface TakenRow {
	id: string;
	key: string;
	holder: string;
	edge: BurstEdge;
	ended_by: BurstEnd;
	opened_at: Date;
	quiet_until: Date;
	lease_until: Date;
	takeovers: number;
}

/** The columns a statement that takes bursts returns, as TakenRow names them (`b` is the bursts table). */
export const TAKEN_COLUMNS =
	'b.id::text AS id, b.key, b.holder, b.edge, b.opened_at, b.quiet_until, b.lease_until, b.takeovers, ' +
	"CASE WHEN b.edge = 'leading' THEN 'leading' WHEN b.item_count >= b.max_items THEN 'maxItems' " +
	"WHEN b.quiet_until >= b.closes_by THEN 'maxWait' ELSE 'quiet' END AS ended_by";
