import type { PoolClient } from 'pg';

import type { ClaimTable } from '../table/claimTable';
import { inTransaction } from '../statements/inTransaction';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { CLAIM_RETRY, withTransientRetry } from '../statements/transientErrors';
import { storedClaimId } from '../record/storedValues';
import { stepTableRef } from './stepTable';
import {
	heldCtes,
	heldRequests,
	stepRecord,
	type StepRecord,
	type StepRequest,
	type StepRow,
} from './stepRecord';

export interface StartOptions {
	/**
	 * The service deduplicates by the step key (an Idempotency-Key header): a step an earlier run started
	 * and never finished may run again, since the service answers a repeat with the first outcome.
	 */
	serviceHonoursKey: boolean;
}

/**
 * Marks each step started where this is its first start, under the event's claim: only the claim's holder
 * marks anything, and one (key, step) is marked by one transaction only (the primary key decides, ON
 * CONFLICT DO NOTHING), so of many concurrent starts exactly one runs. A first start is one statement,
 * committed on its own and durably (as the server is set: the mark must survive a crash before the step
 * runs). A step already marked is read under its row lock in a transaction of its own: finished is
 * `done`; unfinished is `uncertain`, or `run` again (its attempts counted up) where the service honours
 * the step key and an earlier claim started it. A start whose answer was lost is tried again and then
 * finds its own mark: `uncertain`, never a second run. Each (key, step) appears once in `requests` (the
 * caller refuses repeats).
 */
export async function startSteps(
	table: ClaimTable,
	requests: StepRequest[],
	options: StartOptions,
): Promise<StepRecord[]> {
	if (requests.length === 0) return [];
	const { records, markedBefore } = await markFirstStarts(table, requests);
	if (markedBefore.length === 0) return records;
	const { value } = await withTransientRetry(
		table.pool,
		(client) =>
			inTransaction(client, () =>
				startOn(
					client,
					table,
					markedBefore.map((position) => requests[position]),
					options,
				),
			),
		CLAIM_RETRY,
	);
	markedBefore.forEach((position, index) => (records[position] = value[index]));
	return records;
}

/**
 * The first starts, in one statement (one round trip, no transaction block): a held request whose step
 * it marked is `run`, one not held `not_held`; the positions of the held ones whose step was marked before
 * are answered apart, to be read in the transaction of startOn.
 */
async function markFirstStarts(
	table: ClaimTable,
	requests: StepRequest[],
): Promise<{ records: StepRecord[]; markedBefore: number[] }> {
	const { value } = await queryStatementWithRetry<FirstStartRow>(
		table.pool,
		namedStatement(firstStartsSql(table)),
		[
			requests.map((request) => request.key),
			requests.map((request) => storedClaimId(table.layout, request.claimId)),
			requests.map((request) => request.step),
			requests.map((request) => request.claimId),
		],
		CLAIM_RETRY,
	);
	const records = requests.map(() => stepRecord('not_held', undefined));
	const markedBefore: number[] = [];
	for (const row of value.rows) {
		const position = Number(row.n) - 1;
		if (row.started_at === null) markedBefore.push(position);
		else records[position] = stepRecord('run', { ...row, started_at: row.started_at });
	}
	return { records, markedBefore };
}

/** A held request's row: the mark the statement inserted, or NULLs where the step was marked before. */
interface FirstStartRow extends Omit<StepRow, 'started_at'> {
	n: string;
	started_at: Date | null;
}

/**
 * Parameters: $1 keys, $2 claim IDs as stored in the claim table, $3 step names, $4 claim IDs as given.
 * A row per held request (`n`, from 1), with the mark it inserted (NULLs where the step was marked before).
 * The marks are inserted sorted as Postgres sorts the keys' bytes: concurrent batches take them in one order.
 */
function firstStartsSql(table: ClaimTable): string {
	const steps = stepTableRef(table.ref).qualified;
	return (
		`WITH u AS (SELECT * FROM unnest($1::text[], $2::${table.layout.claimIdType}[], $3::text[], $4::text[]) ` +
		`WITH ORDINALITY AS u(key, token, step, claim_id, n)), ${heldCtes(table)}, ` +
		`inserted AS (INSERT INTO ${steps} AS s (key, step, claim_id) ` +
		'SELECT key, step, claim_id FROM mine ORDER BY key COLLATE "C", step COLLATE "C" ' +
		'ON CONFLICT (key, step) DO NOTHING RETURNING s.key, s.step, s.attempts, s.result, s.started_at, s.finished_at) ' +
		'SELECT mine.n, i.attempts, i.result, i.started_at, i.finished_at FROM mine ' +
		'LEFT JOIN inserted AS i ON i.key = mine.key AND i.step = mine.step'
	);
}

interface MarkedRow extends StepRow {
	key: string;
	step: string;
	claim_id: string;
}

async function startOn(
	client: PoolClient,
	table: ClaimTable,
	requests: StepRequest[],
	options: StartOptions,
): Promise<StepRecord[]> {
	const steps = stepTableRef(table.ref).qualified;
	const held = await heldRequests(client, table, requests);
	const records: StepRecord[] = requests.map(() => stepRecord('not_held', undefined));
	const heldOnes = requests.filter((_, position) => held.has(position));
	if (heldOnes.length === 0) return records;

	const id = (key: string, step: string) => JSON.stringify([key, step]);
	const columns = [
		heldOnes.map((request) => request.key),
		heldOnes.map((request) => request.step),
		heldOnes.map((request) => request.claimId),
	];
	// Sorted as Postgres sorts the keys' bytes: concurrent batches take the rows in one order.
	const inserted = await client.query<MarkedRow>(
		`INSERT INTO ${steps} AS s (key, step, claim_id) ` +
			'SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, step, claim_id) ' +
			'ORDER BY u.key COLLATE "C", u.step COLLATE "C" ' +
			'ON CONFLICT (key, step) DO NOTHING RETURNING s.key, s.step, s.claim_id, s.attempts, s.result, s.started_at, s.finished_at',
		columns,
	);
	const outcomes = new Map<string, StepRecord>();
	for (const row of inserted.rows) outcomes.set(id(row.key, row.step), stepRecord('run', row));

	// The rest were marked before (or by a transaction that just committed): read each under its row lock,
	// in a statement of its own, whose snapshot sees that commit.
	const marked = heldOnes.filter((request) => !outcomes.has(id(request.key, request.step)));
	if (marked.length > 0) {
		const current = await client.query<MarkedRow>(
			`SELECT s.key, s.step, s.claim_id, s.attempts, s.result, s.started_at, s.finished_at FROM ${steps} AS s ` +
				'JOIN unnest($1::text[], $2::text[]) AS u(key, step) ON s.key = u.key AND s.step = u.step ' +
				'ORDER BY s.key COLLATE "C", s.step COLLATE "C" FOR UPDATE OF s',
			[marked.map((request) => request.key), marked.map((request) => request.step)],
		);
		const claimIds = new Map(
			marked.map((request) => [id(request.key, request.step), request.claimId]),
		);
		const again: MarkedRow[] = [];
		for (const row of current.rows) {
			const rowId = id(row.key, row.step);
			if (row.finished_at !== null) outcomes.set(rowId, stepRecord('done', row));
			// Started by this very claim (a second start in its run, or this start's own lost answer) it is
			// in flight or unknown even where the service honours the key.
			else if (options.serviceHonoursKey && row.claim_id !== claimIds.get(rowId)) again.push(row);
			else outcomes.set(rowId, stepRecord('uncertain', row));
		}
		if (again.length > 0) {
			const restarted = await client.query<MarkedRow>(
				`UPDATE ${steps} AS s SET attempts = s.attempts + 1, started_at = now(), claim_id = u.claim_id ` +
					'FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, step, claim_id) ' +
					'WHERE s.key = u.key AND s.step = u.step ' +
					'RETURNING s.key, s.step, s.claim_id, s.attempts, s.result, s.started_at, s.finished_at',
				[
					again.map((row) => row.key),
					again.map((row) => row.step),
					again.map((row) => claimIds.get(id(row.key, row.step))),
				],
			);
			for (const row of restarted.rows) outcomes.set(id(row.key, row.step), stepRecord('run', row));
		}
	}
	requests.forEach((request, position) => {
		// A mark deleted between the insert and the read (Forget Step, by hand) stays unknown: uncertain.
		if (held.has(position))
			records[position] =
				outcomes.get(id(request.key, request.step)) ?? stepRecord('uncertain', undefined);
	});
	return records;
}
