import type { ClaimTable } from '../table/claimTable';
import { DIED_IN_LAST_RUN, eventTableRef, scopeColumnMissing } from './eventTable';
import {
	DB_NOW,
	deadSql,
	heldSql,
	leaseEndedSql,
	mineSql,
	PARKED_LEASE,
	processingSql,
} from '../record/claimConditions';
import { storedClaimId } from '../record/storedValues';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';

/**
 * The inbox: claims that keep their event are run again from Postgres. A kept event is due when its
 * claim's lease has ended, either because Retry Later set it to the end of a backoff or because the
 * execution that held it died; Take Due Events takes due events over under the claim's row lock, the
 * same lock a sender's own retry takes them over with, so one of the two wins and the other sees a
 * running claim. After Max Attempts an event is parked (a dead letter): its lease never ends, so neither
 * a retry nor Purge touches it until Requeue puts it back in line.
 */

/** When a failed event is due again: base × factor^(attempt − 1), at most cap, less up to jitter × itself. */
export interface Backoff {
	baseSeconds: number;
	factor: number;
	capSeconds: number;
	/** 0 to 1: the share of each delay that is random, so failures that came together spread out. */
	jitter: number;
}

export interface RetryLaterRequest {
	key: string;
	claimId: string;
	error: string;
	/** Seconds until it is due again, given for this event (a rate limit's Retry-After); absent: the backoff. */
	delaySeconds?: number;
	/**
	 * False when this run did not run the event (a rate limit said not yet): the attempt its take counted
	 * is given back and it is never parked, so waiting for a window never makes a dead letter.
	 */
	countsAsAttempt?: boolean;
}

export type RetryLaterState = 'scheduled' | 'dead_letter' | 'not_held' | 'no_event';

export interface RetryLaterResult {
	state: RetryLaterState;
	/** Runs started so far (the first delivery is 1). */
	attempts: number | null;
	/** When it is due again; null for a dead letter or a claim not held. */
	dueAt: Date | null;
}

/**
 * Records a failed attempt of each held claim's event and makes it due after the backoff (or the delay the
 * request gives), or parks it once it has been started Max Attempts times. Only the claim's holder (its
 * claim ID) can do so. A run that did not count as an attempt gives its attempt back and is never parked.
 */
export async function retryLater(
	table: ClaimTable,
	requests: RetryLaterRequest[],
	maxAttempts: number,
	backoff: Backoff,
): Promise<RetryLaterResult[]> {
	const claims = table.ref.qualified;
	const events = eventTableRef(table.ref).qualified;
	// Where Factor^(attempt − 1) passes e^200 the delay is Cap (Base is at most a year): power() itself
	// would overflow float8 (Factor 4 from about attempt 511) and fail the statement. A Base of 0 is 0
	// without power(), which overflows just the same when multiplied by 0.
	const backoffDelay =
		'LEAST($7::float8, CASE WHEN $5::float8 = 0 THEN 0 WHEN (ev.attempts - 1) * ln($6::float8) > 200 THEN $7::float8 ' +
		'ELSE $5::float8 * power($6::float8, ev.attempts - 1) END) * (1 - $8::float8 * random())';
	const sql =
		`WITH held AS (SELECT c.key FROM ${claims} AS c WHERE c.key = $1 AND ${heldSql(table.layout, 'c', `$2::${table.layout.claimIdType}`)} ` +
		'FOR UPDATE OF c), ' +
		`ev AS (UPDATE ${events} AS v SET last_error = $3, ` +
		'attempts = CASE WHEN $11::boolean THEN GREATEST(v.attempts - 1, 0) ELSE v.attempts END, ' +
		`dead_at = CASE WHEN $10::boolean AND v.attempts >= $4 THEN ${DB_NOW} END ` +
		'FROM held WHERE v.key = held.key RETURNING v.key, v.attempts, v.dead_at IS NOT NULL AS dead), ' +
		`moved AS (UPDATE ${claims} AS c SET lease_until = CASE WHEN ev.dead THEN ${PARKED_LEASE} ` +
		`ELSE ${DB_NOW} + make_interval(secs => COALESCE($9::float8, ${backoffDelay})) END FROM ev WHERE c.key = ev.key RETURNING c.lease_until) ` +
		'SELECT h.n AS held, ev.attempts, ev.dead, moved.lease_until FROM (SELECT count(*)::integer AS n FROM held) AS h ' +
		'LEFT JOIN ev ON true LEFT JOIN moved ON true';
	const results: RetryLaterResult[] = [];
	// A take counted one attempt: a key named again in the batch (by this holder) gives none back again.
	const givenBack = new Set<string>();
	for (const request of requests) {
		const countsAsAttempt = request.countsAsAttempt ?? true;
		const givesBack = !countsAsAttempt && !givenBack.has(request.key);
		const values = [
			request.key,
			storedClaimId(table.layout, request.claimId),
			request.error,
			maxAttempts,
			backoff.baseSeconds,
			backoff.factor,
			backoff.capSeconds,
			backoff.jitter,
			request.delaySeconds ?? null,
			countsAsAttempt,
			givesBack,
		];
		const { value } = await withTransientRetry(
			table.pool,
			(client) =>
				client.query<{
					held: number;
					attempts: number | null;
					dead: boolean | null;
					lease_until: Date | null;
				}>(sql, values),
			SETTLE_RETRY,
		);
		const row = value.rows[0];
		const state: RetryLaterState =
			row.held === 0
				? 'not_held'
				: row.attempts === null
					? 'no_event'
					: row.dead
						? 'dead_letter'
						: 'scheduled';
		// Only the holder's statement gave one back: an item of another claim ID before it did not.
		if (givesBack && state !== 'not_held') givenBack.add(request.key);
		results.push({
			state,
			attempts: row.attempts,
			dueAt: state === 'scheduled' ? row.lease_until : null,
		});
	}
	return results;
}

export interface DueEventQuery {
	/** At most this many events per call. */
	limit: number;
	/** The lease each taken event's new holder gets. */
	leaseSeconds: number;
	/** An event already started this many times is parked instead of taken. */
	maxAttempts: number;
	/** The claim ID of this taker: Complete and Retry Later name it. */
	claimId: string;
	/** Only events kept by a claim with this Scope; null: only those kept without one. */
	scope: string | null;
}

export interface DueEvent {
	key: string;
	/** Runs started, this one included. */
	attempts: number;
	receivedAt: Date;
	contentType: string | null;
	headers: Record<string, string>;
	body: Buffer;
	lastError: string | null;
	leaseUntil: Date;
}

export interface DueEvents {
	taken: DueEvent[];
	/** Events whose last allowed run died without Complete or Retry Later: parked now. */
	parked: number;
}

/**
 * Takes over up to `limit` due events of one scope, oldest lease first, in one statement. Rows another
 * transaction holds (a sender's retry taking the same claim, another taker) are skipped, never waited for
 * or taken twice. Events this claim ID already holds come back first, as they are: an earlier attempt of
 * this very statement committed and its answer was lost, and its events must neither wait out their lease
 * nor count another run. Events left behind by a claim that is gone or completed (a Complete that did not
 * know of the event table yet) are dropped on the way.
 */
export async function takeDueEvents(table: ClaimTable, query: DueEventQuery): Promise<DueEvents> {
	const claims = table.ref.qualified;
	const events = eventTableRef(table.ref).qualified;
	const processing = processingSql(table.layout, 'c');
	if (query.scope !== null && !table.capabilities.eventScope) throw scopeColumnMissing(table.ref);
	// A table made before events had a scope holds only events kept without one.
	const inScope = table.capabilities.eventScope
		? 'v.scope IS NOT DISTINCT FROM $5::text'
		: '$5::text IS NULL';
	const mine = mineSql('c', `$2::${table.layout.claimIdType}`);
	const sql =
		`WITH due AS (SELECT c.key, ${mine} AS held, v.attempts >= $4 AND NOT ${mine} AS last ` +
		`FROM ${claims} AS c JOIN ${events} AS v ON v.key = c.key ` +
		`WHERE v.dead_at IS NULL AND ${processing} AND ${inScope} AND (${leaseEndedSql('c', DB_NOW)} OR ${mine}) ` +
		`ORDER BY ${mine} DESC, c.lease_until LIMIT $1 FOR UPDATE OF c SKIP LOCKED), ` +
		`taken AS (UPDATE ${claims} AS c SET ` +
		`claim_token = CASE WHEN due.last THEN c.claim_token ELSE $2::${table.layout.claimIdType} END, ` +
		`lease_until = CASE WHEN due.last THEN ${PARKED_LEASE} WHEN due.held THEN c.lease_until ELSE ${DB_NOW} + make_interval(secs => $3) END ` +
		'FROM due WHERE c.key = due.key RETURNING c.key, c.lease_until, due.last, due.held), ' +
		`parked AS (UPDATE ${events} AS v SET dead_at = ${DB_NOW}, ` +
		`last_error = COALESCE(v.last_error, '${DIED_IN_LAST_RUN}') ` +
		'FROM taken WHERE v.key = taken.key AND taken.last RETURNING v.key), ' +
		`counted AS (UPDATE ${events} AS v SET attempts = v.attempts + CASE WHEN taken.held THEN 0 ELSE 1 END ` +
		'FROM taken WHERE v.key = taken.key AND NOT taken.last ' +
		'RETURNING v.key, v.attempts, v.received_at, v.content_type, v.headers, v.body, v.last_error), ' +
		`orphans AS (DELETE FROM ${events} AS v WHERE v.key IN (SELECT o.key FROM ${events} AS o ` +
		`LEFT JOIN ${claims} AS c ON c.key = o.key WHERE c.key IS NULL OR NOT ${processing} LIMIT $1)) ` +
		'SELECT counted.*, taken.lease_until, (SELECT count(*)::integer FROM parked) AS parked ' +
		'FROM (SELECT 1) AS one LEFT JOIN counted ON true LEFT JOIN taken ON taken.key = counted.key ORDER BY counted.received_at';
	const values = [
		query.limit,
		storedClaimId(table.layout, query.claimId),
		query.leaseSeconds,
		query.maxAttempts,
		query.scope,
	];
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{
				key: string | null;
				attempts: number;
				received_at: Date;
				content_type: string | null;
				headers: Record<string, string> | null;
				body: Buffer;
				last_error: string | null;
				lease_until: Date;
				parked: number;
			}>(sql, values),
		SETTLE_RETRY,
	);
	return {
		parked: value.rows[0]?.parked ?? 0,
		taken: value.rows
			.filter((row) => row.key !== null)
			.map((row) => ({
				key: row.key!,
				attempts: row.attempts,
				receivedAt: row.received_at,
				contentType: row.content_type,
				headers: row.headers ?? {},
				body: row.body,
				lastError: row.last_error,
				leaseUntil: row.lease_until,
			})),
	};
}

/**
 * Parks events this claim ID holds, each with its reason as the last error: for an event that cannot be
 * run as it came (Take Due cannot rebuild its item), a dead letter an operator sees is the loud way to
 * fail that loses nothing. Returns the keys parked.
 */
export async function parkHeldEvents(
	table: ClaimTable,
	claimId: string,
	reasons: Array<{ key: string; reason: string }>,
): Promise<string[]> {
	const claims = table.ref.qualified;
	const events = eventTableRef(table.ref).qualified;
	const sql =
		'WITH input AS (SELECT * FROM unnest($1::text[], $3::text[]) AS u(key, reason)), ' +
		`held AS (SELECT c.key, input.reason FROM ${claims} AS c JOIN input ON input.key = c.key ` +
		`WHERE ${heldSql(table.layout, 'c', `$2::${table.layout.claimIdType}`)} ` +
		'ORDER BY c.key COLLATE "C" FOR UPDATE OF c), ' +
		`moved AS (UPDATE ${claims} AS c SET lease_until = ${PARKED_LEASE} FROM held WHERE c.key = held.key RETURNING c.key) ` +
		`UPDATE ${events} AS v SET dead_at = ${DB_NOW}, last_error = held.reason FROM held JOIN moved ON moved.key = held.key ` +
		'WHERE v.key = held.key RETURNING v.key';
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{ key: string }>(sql, [
				reasons.map((entry) => entry.key),
				storedClaimId(table.layout, claimId),
				reasons.map((entry) => entry.reason),
			]),
		SETTLE_RETRY,
	);
	return value.rows.map((row) => row.key);
}

/** Puts dead letters back in line: due at once, with Max Attempts counted afresh. Returns the keys requeued. */
export async function requeueEvents(table: ClaimTable, keys: string[]): Promise<string[]> {
	const claims = table.ref.qualified;
	const events = eventTableRef(table.ref).qualified;
	// Only beside a claim still processing: a completed claim's leftover event (its drop failed after the
	// Complete) must not run again, and a lease set on a compact row would make the completed claim processing.
	const sql =
		`WITH back AS (UPDATE ${events} AS v SET dead_at = NULL, attempts = 0 FROM ${claims} AS c WHERE v.key = ANY($1::text[]) ` +
		`AND ${deadSql('v')} AND c.key = v.key AND ${processingSql(table.layout, 'c')} RETURNING v.key), ` +
		`due AS (UPDATE ${claims} AS c SET lease_until = ${DB_NOW} FROM back WHERE c.key = back.key RETURNING c.key) ` +
		'SELECT key FROM due ORDER BY key';
	const { value } = await withTransientRetry(
		table.pool,
		(client) => client.query<{ key: string }>(sql, [keys]),
		SETTLE_RETRY,
	);
	return value.rows.map((row) => row.key);
}

export interface DeadLetter {
	key: string;
	attempts: number;
	lastError: string | null;
	deadAt: Date;
	receivedAt: Date;
}

/** Parked events, the oldest first, and how many there are in all. */
export async function listDeadLetters(
	table: ClaimTable,
	limit: number,
): Promise<{ deadLetters: DeadLetter[]; count: number }> {
	const events = eventTableRef(table.ref).qualified;
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			client.query<{
				key: string;
				attempts: number;
				last_error: string | null;
				dead_at: Date;
				received_at: Date;
				total: number;
			}>(
				'SELECT key, attempts, last_error, dead_at, received_at, count(*) OVER ()::integer AS total ' +
					`FROM ${events} AS v WHERE ${deadSql('v')} ORDER BY dead_at, key LIMIT $1`,
				[limit],
			),
		SETTLE_RETRY,
	);
	return {
		count: value.rows[0]?.total ?? 0,
		deadLetters: value.rows.map((row) => ({
			key: row.key,
			attempts: row.attempts,
			lastError: row.last_error,
			deadAt: row.dead_at,
			receivedAt: row.received_at,
		})),
	};
}
