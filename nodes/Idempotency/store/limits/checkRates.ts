import type { Pool } from 'pg';

import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { CLAIM_RETRY } from '../statements/transientErrors';
import type { LimitTables } from './limitTables';

/** One attempt to start under a key's rate: at most `maxStarts` starts in any `windowMs`. */
export interface RateRequest {
	key: string;
	maxStarts: number;
	windowMs: number;
	/** Names this attempt: sent twice (a lost answer), it starts once. */
	attemptId: string;
}

export type RateAnswer =
	| { allowed: true; startedAt: Date }
	| { allowed: false; retryAfterSeconds: number; decidedAt: Date };

interface RateRow {
	allowed: boolean;
	decided_at: Date;
	retry_after: number | null;
}

/**
 * An exact sliding window, decided in one statement under the key's row lock. The row keeps the starts
 * still inside the window (oldest first); an attempt starts iff fewer than R of them are newer than its
 * time minus W, and then its time is added. So any R + 1 starts of a key span at least W: no window of
 * length W, wherever it begins, holds more than R (a fixed window allows 2R across its edge; GCRA's burst
 * does too). The time is the database's clock_timestamp(), read under the row lock, not now(): a
 * statement that waited for the lock would otherwise record the time it began, before a start it waited
 * for, and the starts would not be in the order they were decided, which the guarantee rests on.
 *
 * Limited: retry after the oldest start that keeps the count at R leaves the window, rounded up to whole
 * seconds, at least 1. A limited attempt rewrites the row too (its starts pruned to the window): one small
 * row per key, in exchange for an answer read under the same lock as the decision. counts_until is when the
 * newest start leaves the window: from then on the row limits nothing, and Purge may delete it.
 *
 * Allowed: the attempt's start is the row's newest (a later start would have named its own attempt), so
 * an attempt sent again is answered with the time it started, not the time it was sent again.
 */
const checkSql = (t: LimitTables) => `
INSERT INTO ${t.rates} AS r (key, starts, decided_at, last_start_by, counts_until)
SELECT $1, ARRAY[c.t], c.t, $4, c.t + $3::float8 * interval '1 millisecond'
FROM (SELECT clock_timestamp() AS t) c
ON CONFLICT (key) DO UPDATE SET (starts, decided_at, last_start_by, counts_until) = (
	SELECT CASE WHEN r.last_start_by = $4 THEN r.starts
			WHEN cardinality(k.kept) < $2 THEN k.kept || c.t ELSE k.kept END,
		c.t,
		CASE WHEN r.last_start_by = $4 OR cardinality(k.kept) < $2 THEN $4 ELSE r.last_start_by END,
		CASE WHEN r.last_start_by = $4 THEN r.counts_until
			WHEN cardinality(k.kept) < $2 THEN c.t + $3::float8 * interval '1 millisecond'
			ELSE k.kept[cardinality(k.kept)] + $3::float8 * interval '1 millisecond' END
	FROM (SELECT clock_timestamp() AS t) c,
		LATERAL (SELECT ARRAY(SELECT s FROM unnest(r.starts) AS s
			WHERE s > c.t - $3::float8 * interval '1 millisecond' ORDER BY s) AS kept) k)
RETURNING r.last_start_by = $4 AS allowed,
	CASE WHEN r.last_start_by = $4 THEN r.starts[cardinality(r.starts)] ELSE r.decided_at END AS decided_at,
	CASE WHEN r.last_start_by = $4 THEN NULL ELSE GREATEST(1, ceil(extract(epoch FROM
		r.starts[cardinality(r.starts) - $2 + 1] + $3::float8 * interval '1 millisecond' - r.decided_at)))::int
	END AS retry_after`;

/** Decides each attempt in input order, one statement each. */
export async function checkRates(
	pool: Pool,
	tables: LimitTables,
	requests: RateRequest[],
): Promise<RateAnswer[]> {
	const statement = namedStatement(checkSql(tables));
	const answers: RateAnswer[] = [];
	for (const request of requests) {
		const { value } = await queryStatementWithRetry<RateRow>(
			pool,
			statement,
			[request.key, request.maxStarts, request.windowMs, request.attemptId],
			CLAIM_RETRY,
		);
		const row = value.rows[0];
		answers.push(
			row.allowed
				? { allowed: true, startedAt: row.decided_at }
				: {
						allowed: false,
						retryAfterSeconds: row.retry_after ?? 1,
						decidedAt: row.decided_at,
					},
		);
	}
	return answers;
}
