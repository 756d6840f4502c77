import type { Pool } from 'pg';

import { ClaimError, WatermarkError } from '../../errors';
import { CLAIM_RETRY, withTransientRetry } from '../statements/transientErrors';
import { withWatermarkTable, type WatermarkRef } from './watermarkTable';

/** What a scope's watermark holds: numbers (Value Is Higher) or dates (Value Is a Date Later). */
export type WatermarkKind = 'number' | 'date';

export interface WatermarkRequest {
	scope: string;
	kind: WatermarkKind;
	/** Each item's value as canonical text of its kind, in input order; at least one. */
	values: string[];
	/** This execution's claim id: a statement retried after a lost answer finds its own advance by it. */
	claimId: string;
	createIfMissing: boolean;
}

export interface WatermarkOutcome {
	/** Whether this execution moved the mark; only then does any value pass. */
	advanced: boolean;
	/** The mark this execution's values were compared with; null on the scope's first execution. */
	previousMark: string | null;
	/** The mark after this execution; null only when a concurrent first execution hid it. */
	mark: string | null;
	/** Per value, in input order: higher than previousMark (every value, on the first execution). */
	passed: boolean[];
}

interface DecisionRow {
	advanced: boolean;
	previous_mark: string | null;
	mark: string;
	kind: WatermarkKind;
	passed: boolean[] | null;
}

/** How each kind is compared and stored. Fixed texts, never user input. */
const KINDS: Record<WatermarkKind, { type: string; stored: (text: string) => string }> = {
	number: { type: 'numeric', stored: (text) => `(${text})::numeric::text` },
	date: { type: 'timestamptz', stored: (text) => text },
};

/**
 * One statement moves the scope's mark up to the batch's highest value and says which values pass.
 * `INSERT … ON CONFLICT (scope) DO UPDATE … WHERE higher` is what makes it safe under READ COMMITTED:
 * the scope's first two executions race on the primary key, and the loser waits and then updates the
 * winner's row; any later execution locks the row and reads its newest version (not its snapshot's)
 * before deciding. The old mark comes back through `previous_mark`, which the update itself writes:
 * RETURNING shows only the new row (Postgres 15–17 have no RETURNING OLD), and a self-join read of the
 * old row would see the snapshot, not the version the lock waited for. When nothing is higher, nothing
 * is written; the row is only read back (from the snapshot: then no value passes anyway).
 */
function advanceWatermarkSql(ref: WatermarkRef, kind: WatermarkKind): string {
	const { type, stored } = KINDS[kind];
	const ours = 'w.advanced_by = EXCLUDED.advanced_by';
	return (
		'WITH input AS (SELECT u.v, u.n FROM unnest($3::text[]) WITH ORDINALITY AS u(v, n)), ' +
		`top AS (SELECT v FROM input ORDER BY v::${type} DESC LIMIT 1), ` +
		`advanced AS (INSERT INTO ${ref.qualified} AS w (scope, kind, mark, advanced_by) ` +
		`SELECT $1::text, $2::text, ${stored('top.v')}, $4::text FROM top ` +
		'ON CONFLICT (scope) DO UPDATE SET ' +
		`previous_mark = CASE WHEN ${ours} THEN w.previous_mark ELSE w.mark END, ` +
		`mark = CASE WHEN ${ours} THEN w.mark ELSE EXCLUDED.mark END, ` +
		`advanced_at = CASE WHEN ${ours} THEN w.advanced_at ELSE EXCLUDED.advanced_at END, ` +
		'advanced_by = EXCLUDED.advanced_by ' +
		// CASE, not AND: the cast of a mark of the other kind must never be evaluated.
		`WHERE ${ours} OR CASE WHEN w.kind = EXCLUDED.kind THEN EXCLUDED.mark::${type} > w.mark::${type} ELSE false END ` +
		'RETURNING w.previous_mark, w.mark), ' +
		'decided AS (SELECT true AS advanced, a.previous_mark, a.mark, $2::text AS kind FROM advanced a ' +
		`UNION ALL SELECT false, NULL, w.mark, w.kind FROM ${ref.qualified} w ` +
		'WHERE w.scope = $1 AND NOT EXISTS (SELECT 1 FROM advanced)) ' +
		'SELECT d.advanced, d.previous_mark, d.mark, d.kind, CASE WHEN d.advanced THEN ARRAY(' +
		`SELECT d.previous_mark IS NULL OR input.v::${type} > d.previous_mark::${type} FROM input ORDER BY input.n` +
		') END AS passed FROM decided d'
	);
}

/**
 * Advances the scope's watermark for one batch. A statement whose answer was lost is sent again with the
 * same claim id: if the first attempt committed, the row still names this execution and the same values
 * pass; if another execution has advanced the mark since, this one cannot know what its lost attempt
 * decided and fails, routing nothing.
 */
export async function advanceWatermark(
	pool: Pool,
	ref: WatermarkRef,
	request: WatermarkRequest,
): Promise<WatermarkOutcome> {
	const sql = advanceWatermarkSql(ref, request.kind);
	const values = [request.scope, request.kind, request.values, request.claimId];
	const { value, lostAttempts } = await withWatermarkTable(pool, ref, request.createIfMissing, () =>
		withTransientRetry(pool, (client) => client.query<DecisionRow>(sql, values), CLAIM_RETRY),
	);
	// No row: a concurrent first execution inserted the scope after this statement's snapshot, and its
	// mark was not below this batch's highest value. Read it now, for the answer and the kind check.
	const row =
		value.rows[0] ??
		(
			await pool.query<DecisionRow>(
				`SELECT false AS advanced, NULL AS previous_mark, mark, kind, NULL AS passed FROM ${ref.qualified} WHERE scope = $1`,
				[request.scope],
			)
		).rows[0];
	if (row && row.kind !== request.kind) {
		throw new WatermarkError(
			`the scope "${request.scope}" holds a watermark of ${row.kind === 'number' ? 'numbers (Value Is Higher)' : 'dates (Value Is a Date Later)'}, ` +
				`so it cannot compare ${request.kind === 'number' ? 'numbers' : 'dates'}: give this node its own Scope, or clear the scope's history first`,
		);
	}
	if (!row?.advanced && lostAttempts > 0) {
		throw new ClaimError(
			`the connection to Postgres failed after the watermark of scope "${request.scope}" was sent, and another execution has moved it since, ` +
				'so it cannot tell which of these values the lost attempt passed. Nothing was routed.',
		);
	}
	return {
		advanced: row?.advanced ?? false,
		previousMark: row?.previous_mark ?? null,
		mark: row?.mark ?? null,
		passed: row?.passed ?? request.values.map(() => false),
	};
}
