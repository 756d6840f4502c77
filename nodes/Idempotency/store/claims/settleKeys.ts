import { storedResponseOf, type StoredResponse } from '../../response/storedResponse';
import { openClaimTable, type ClaimTable } from '../table/claimTable';
import { eventTableRef } from '../inbox/eventTable';
import { dropStepsSql } from '../steps/stepTable';
import { signalSettled } from './settleSignals';
import { storedClaimId } from '../record/storedValues';
import { completedSetSql, mineSql, processingSql } from '../record/claimConditions';
import { SETTLE_RETRY, withTransientRetry } from '../statements/transientErrors';
import type { SettledStatus } from '../record/claimStatus';

export interface SettleRequest {
	key: string;
	/**
	 * The claim ID the claim node gave its holder. Complete without one marks the key done whoever holds
	 * it; Release always needs one, so it can only ever undo the caller's own claim.
	 */
	claimId: string | null;
	/**
	 * Complete only: the answer to store with the key (its JSON text, see response/storedResponse), for
	 * later repeats to replay. A key that already holds one keeps it: the first answer is the one replayed.
	 */
	response?: string;
}

/** A settled claim: what its row is now and, where Complete stored one, the response it holds. */
export interface SettledClaim {
	state: SettledStatus;
	response: StoredResponse | null;
}

/**
 * Marks claims done. A completed row keeps no claim ID, so no Release can delete it afterwards; a
 * Complete that finds the key already completed (its own earlier attempt, or another holder's) reports
 * it completed too, which keeps Complete safe to retry after a lost answer.
 */
export async function completeClaims(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<SettledClaim[]> {
	return requests.length === 0 ? [] : settle(table, completeStatement(table, requests, 'any'));
}

/**
 * The statement that completes `requests`. `any`: Complete's own rule (a request without a claim ID
 * completes the key whoever holds it, and a completed key reports completed). `holder`: only a claim this
 * claim ID holds, locked until the caller's transaction ends, so no takeover can slip in before it commits.
 */
export function completeStatement(
	table: ClaimTable,
	requests: SettleRequest[],
	who: 'any' | 'holder',
): SettleStatement {
	const storing = requests.some((request) => request.response !== undefined);
	if (!table.capabilities.leases && !storing && who === 'any') {
		// Without lease columns every claim is final already (the caller refuses claim IDs here).
		return settleStatement(
			table,
			`${targets(table, 'true', false)}, done AS (SELECT key FROM targets)`,
			requests,
			'completed',
		);
	}
	const completed = table.capabilities.leases ? `NOT ${processingSql(table.layout, 't')}` : 'true';
	const matches =
		who === 'holder'
			? mineSql('t', 'u.claim_id')
			: table.capabilities.leases
				? `(u.claim_id IS NULL OR t.claim_token = u.claim_id OR (t.claim_token IS NULL AND ${completed}))`
				: 'true';
	// A compact row is completed by clearing its lease; the original layout also says so in its status.
	const sets = table.capabilities.leases ? completedSetSql(table.layout) : [];
	// The first stored answer stays: a Complete retried after a lost reply stores nothing new.
	if (storing) sets.push('response = COALESCE(e.response, targets.response)');
	return settleStatement(
		table,
		`${targets(table, matches, true, storing)}, done AS (UPDATE ${table.ref.qualified} AS e SET ${sets.join(', ')} ` +
			`FROM targets WHERE e.key = targets.key RETURNING e.key${storing ? ', e.response' : ''})`,
		requests,
		'completed',
		storing,
	);
}

/** Deletes claims so the provider's next retry is new: only the holder's, and never a completed one. */
export async function releaseClaims(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<SettledClaim[]> {
	if (requests.length === 0) return [];
	return settle(
		table,
		settleStatement(
			table,
			`${targets(table, 't.claim_token = u.claim_id')}, done AS (DELETE FROM ${table.ref.qualified} AS e ` +
				`WHERE e.key IN (SELECT key FROM targets) RETURNING e.key)`,
			requests,
			'released',
		),
	);
}

/**
 * Drops the kept events of keys just settled by a statement whose picture of the table knew of no event
 * table, once the catalog, read afresh, shows one. Only where the claim is no longer processing: a new
 * delivery that claimed the key meanwhile keeps the event it brought.
 */
async function dropSettledEvents(table: ClaimTable, keys: string[]): Promise<void> {
	const current = await openClaimTable(table.pool, table.ref, {
		createIfMissing: false,
		privileges: [],
		fresh: true,
	});
	if (!current.capabilities.events || keys.length === 0) return;
	const processing = current.capabilities.leases ? processingSql(current.layout, 'c') : 'false';
	await withTransientRetry(
		table.pool,
		(client) =>
			client.query(
				`DELETE FROM ${eventTableRef(table.ref).qualified} AS v WHERE v.key = ANY($1::text[]) ` +
					`AND NOT EXISTS (SELECT 1 FROM ${table.ref.qualified} AS c WHERE c.key = v.key AND ${processing})`,
				[keys],
			),
		SETTLE_RETRY,
	);
}

/**
 * Per (key, claim ID) pair: whether it was settled, and otherwise what its row is. The `cur` join reads the
 * statement's snapshot, taken before `done` ran, which for a pair left unsettled is the row as it stays.
 */
function settledPairs(table: ClaimTable, storing: boolean, extra: string): string {
	const processing = table.capabilities.leases ? processingSql(table.layout, 'cur') : 'false';
	return (
		'SELECT u.n, done.key IS NOT NULL AS settled, cur.key IS NOT NULL AS present, ' +
		`coalesce(${processing}, false) AS processing${storing ? ', done.response' : ''}${extra} ` +
		`FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n) ` +
		'LEFT JOIN targets ON targets.n = u.n LEFT JOIN done ON done.key = targets.key ' +
		`LEFT JOIN ${table.ref.qualified} AS cur ON cur.key = u.k`
	);
}

/** The rows each (key, claim ID) pair matches, locked in key order first so concurrent batches cannot deadlock. */
function targets(table: ClaimTable, matches: string, lock = true, storing = false): string {
	const responses = storing ? ', $3::json[]' : '';
	return (
		`WITH targets AS (SELECT t.key, u.n${storing ? ', u.response' : ''} FROM ${table.ref.qualified} AS t ` +
		`JOIN unnest($1::text[], $2::${table.layout.claimIdType}[]${responses}) WITH ORDINALITY AS u(k, claim_id${storing ? ', response' : ''}, n) ` +
		`ON t.key = u.k AND ${matches}${lock ? ' ORDER BY t.key COLLATE "C" FOR UPDATE OF t' : ''})`
	);
}

/** A settle statement ready to send, and how to read its answer. */
export interface SettleStatement {
	text: string;
	values: unknown[];
	read(rows: SettleRow[]): SettleAnswer;
}

interface SettleRow {
	n: string;
	settled: boolean;
	present: boolean;
	processing: boolean;
	response?: unknown;
	event_table_named?: boolean;
}

/** What a settle statement did: each request's claim, the keys it settled, and whether to look for events. */
export interface SettleAnswer {
	claims: SettledClaim[];
	settledKeys: string[];
	/** The statement knew of no event table and the catalog named one: settled keys may have events left. */
	eventTableNamed: boolean;
}

/**
 * What each request's row is now. A (key, claim ID) pair is sent once: a batch holding one key under a stale
 * and a current claim ID settles only the current one, and reports the stale one by the row it left.
 */
function settleStatement(
	table: ClaimTable,
	sql: string,
	requests: SettleRequest[],
	settledState: 'completed' | 'released',
	storing = false,
): SettleStatement {
	const pairId = (request: SettleRequest) => JSON.stringify([request.key, request.claimId]);
	const pairs = [...new Map(requests.map((request) => [pairId(request), request])).values()];
	const values: unknown[] = [
		pairs.map((pair) => pair.key),
		pairs.map((pair) => (pair.claimId === null ? null : storedClaimId(table.layout, pair.claimId))),
	];
	if (storing) values.push(pairs.map((pair) => pair.response ?? null));
	// A kept event is dropped by the statement that settles its claim. A picture of the table that knows of
	// no event table may be older than it (made by another worker since): the statement asks the catalog.
	const events = eventTableRef(table.ref);
	let dropEvents = '';
	let eventTableCheck = '';
	if (table.capabilities.events) {
		dropEvents = `, dropped AS (DELETE FROM ${events.qualified} AS v USING done WHERE v.key = done.key)`;
	} else {
		values.push(events.qualified);
		eventTableCheck = `, to_regclass($${values.length}::text) IS NOT NULL AS event_table_named`;
	}
	// A settled claim's step marks (store/steps) go in the same statement too, where the table has them.
	dropEvents += dropStepsSql(table, 'done');
	const read = (rows: SettleRow[]): SettleAnswer => {
		const settled = new Map<string, SettledClaim>();
		const settledKeys: string[] = [];
		for (const row of rows) {
			const pair = pairs[Number(row.n) - 1];
			if (row.settled) settledKeys.push(pair.key);
			const state: SettledStatus = row.settled
				? settledState
				: !row.present
					? 'not_found'
					: row.processing
						? 'processing'
						: 'completed';
			settled.set(pairId(pair), { state, response: storedResponseOf(row.response) });
		}
		return {
			claims: requests.map(
				(request) => settled.get(pairId(request)) ?? { state: 'not_found', response: null },
			),
			settledKeys,
			eventTableNamed: rows.some((row) => row.event_table_named === true),
		};
	};
	return {
		text: `${sql}${dropEvents} ${settledPairs(table, storing, eventTableCheck)}`,
		values,
		read,
	};
}

/** Sends a settle statement on its own, retried through outages, then wakes this process's waiters. */
async function settle(table: ClaimTable, statement: SettleStatement): Promise<SettledClaim[]> {
	const { value } = await withTransientRetry(
		table.pool,
		(client) => client.query<SettleRow>(statement.text, statement.values),
		SETTLE_RETRY,
	);
	return afterSettled(table, statement.read(value.rows));
}

/** Once a settle statement has committed: events an older picture missed, then this process's waiters. */
export async function afterSettled(
	table: ClaimTable,
	answer: SettleAnswer,
): Promise<SettledClaim[]> {
	if (answer.eventTableNamed) await dropSettledEvents(table, answer.settledKeys);
	// Repeats this process holds waiting for these keys look at them now (the statement has committed).
	signalSettled(table.ref.qualified, answer.settledKeys);
	return answer.claims;
}
