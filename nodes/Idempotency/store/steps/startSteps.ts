import type { PoolClient } from 'pg';

import type { ClaimTable } from '../table/claimTable';
import { inTransaction } from '../statements/inTransaction';
import { CLAIM_RETRY, withTransientRetry } from '../statements/transientErrors';
import { stepTableRef } from './stepTable';
import {
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
 * Marks each step started where this is its first start, in one transaction under the event's claim: only
 * the claim's holder marks anything, and one (key, step) is marked by one transaction only (the primary
 * key decides, ON CONFLICT DO NOTHING), so of many concurrent starts exactly one runs. A step already
 * marked is read under its row lock: finished is `done`; unfinished is `uncertain`, or `run` again (its
 * attempts counted up) where the service honours the step key and an earlier claim started it. A start
 * whose answer was lost is tried again and then finds its own mark: `uncertain`, never a second run.
 * Each (key, step) appears once in `requests` (the caller refuses repeats).
 */
export async function startSteps(
	table: ClaimTable,
	requests: StepRequest[],
	options: StartOptions,
): Promise<StepRecord[]> {
	if (requests.length === 0) return [];
	const { value } = await withTransientRetry(
		table.pool,
		(client) => inTransaction(client, () => startOn(client, table, requests, options)),
		CLAIM_RETRY,
	);
	return value;
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
