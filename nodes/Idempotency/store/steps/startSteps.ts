import type { ClaimTable } from '../table/claimTable';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { CLAIM_RETRY } from '../statements/transientErrors';
import { storedClaimId } from '../record/storedValues';
import { stepTableRef } from './stepTable';
import {
	heldCtes,
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
 * CONFLICT DO NOTHING), so of many concurrent starts exactly one runs. A step already marked is read under
 * its row lock: finished is `done`; unfinished is `uncertain`, or `run` again (its attempts counted up)
 * where the service honours the step key and an earlier claim started it. All of it is one statement,
 * committed on its own and durably (as the server is set: a mark must survive a crash before the step
 * runs). A start whose answer was lost is tried again and then finds its own mark: `uncertain`, never a
 * second run. Each (key, step) appears once in `requests` (the caller refuses repeats).
 */
export async function startSteps(
	table: ClaimTable,
	requests: StepRequest[],
	options: StartOptions,
): Promise<StepRecord[]> {
	if (requests.length === 0) return [];
	const { records, unseen } = await startInOneStatement(table, requests, options);
	if (unseen.length === 0) return records;
	// Marked by a concurrent start that committed after the statement's snapshot was taken: the same
	// statement sent again sees that commit.
	const again = await startInOneStatement(
		table,
		unseen.map((position) => requests[position]),
		options,
	);
	// Still unseen, the mark was deleted and made again meanwhile (Forget Step by hand): unknown, uncertain.
	again.unseen.forEach((index) => (again.records[index] = stepRecord('uncertain', undefined)));
	unseen.forEach((position, index) => (records[position] = again.records[index]));
	return records;
}

/** A held request's row: its state, or NULL where the mark was made by a commit the statement did not see. */
interface StartRow extends Omit<StepRow, 'started_at'> {
	n: string;
	state: 'run' | 'done' | 'uncertain' | null;
	started_at: Date | null;
}

/** Every request in one statement; the positions of held ones whose mark it could not see come apart. */
async function startInOneStatement(
	table: ClaimTable,
	requests: StepRequest[],
	options: StartOptions,
): Promise<{ records: StepRecord[]; unseen: number[] }> {
	const { value } = await queryStatementWithRetry<StartRow>(
		table.pool,
		namedStatement(startSql(table)),
		[
			requests.map((request) => request.key),
			requests.map((request) => storedClaimId(table.layout, request.claimId)),
			requests.map((request) => request.step),
			requests.map((request) => request.claimId),
			options.serviceHonoursKey,
		],
		CLAIM_RETRY,
	);
	const records = requests.map(() => stepRecord('not_held', undefined));
	const unseen: number[] = [];
	for (const row of value.rows) {
		const position = Number(row.n) - 1;
		if (row.state === null || row.started_at === null) unseen.push(position);
		else records[position] = stepRecord(row.state, { ...row, started_at: row.started_at });
	}
	return { records, unseen };
}

/**
 * Parameters: $1 keys, $2 claim IDs as stored in the claim table, $3 step names, $4 claim IDs as given,
 * $5 whether the service honours the step key. A row per held request (`n`, from 1). The marks it sees are
 * locked, and the new ones inserted, in the order Postgres sorts the keys' bytes: concurrent batches take
 * them in one order. A mark it does not see and cannot insert was committed after its snapshot: state NULL.
 */
function startSql(table: ClaimTable): string {
	const steps = stepTableRef(table.ref).qualified;
	const same = (a: string, b: string) => `${a}.key = ${b}.key AND ${a}.step = ${b}.step`;
	return (
		`WITH u AS (SELECT * FROM unnest($1::text[], $2::${table.layout.claimIdType}[], $3::text[], $4::text[]) ` +
		`WITH ORDINALITY AS u(key, token, step, claim_id, n)), ${heldCtes(table)}, ` +
		'marked AS (SELECT s.key, s.step, s.claim_id, s.attempts, s.result, s.started_at, s.finished_at ' +
		`FROM ${steps} AS s JOIN mine ON ${same('s', 'mine')} ` +
		'ORDER BY s.key COLLATE "C", s.step COLLATE "C" FOR UPDATE OF s), ' +
		// Started by this very claim (a second start in its run, or this start's own lost answer) it is in
		// flight or unknown even where the service honours the key.
		`restarted AS (UPDATE ${steps} AS s SET attempts = s.attempts + 1, started_at = now(), claim_id = mine.claim_id ` +
		`FROM mine, marked WHERE $5::boolean AND ${same('marked', 's')} AND ${same('mine', 's')} ` +
		'AND marked.finished_at IS NULL AND marked.claim_id IS DISTINCT FROM mine.claim_id ' +
		'RETURNING s.key, s.step, s.attempts, s.started_at), ' +
		`inserted AS (INSERT INTO ${steps} AS s (key, step, claim_id) ` +
		`SELECT key, step, claim_id FROM mine WHERE NOT EXISTS (SELECT 1 FROM marked WHERE ${same('marked', 'mine')}) ` +
		'ORDER BY key COLLATE "C", step COLLATE "C" ' +
		'ON CONFLICT (key, step) DO NOTHING RETURNING s.key, s.step, s.attempts, s.started_at) ' +
		"SELECT mine.n, CASE WHEN i.key IS NOT NULL OR r.key IS NOT NULL THEN 'run' " +
		"WHEN m.finished_at IS NOT NULL THEN 'done' WHEN m.key IS NOT NULL THEN 'uncertain' END AS state, " +
		'COALESCE(i.attempts, r.attempts, m.attempts) AS attempts, m.result, ' +
		'COALESCE(i.started_at, r.started_at, m.started_at) AS started_at, m.finished_at FROM mine ' +
		`LEFT JOIN inserted AS i ON ${same('i', 'mine')} LEFT JOIN restarted AS r ON ${same('r', 'mine')} ` +
		`LEFT JOIN marked AS m ON ${same('m', 'mine')}`
	);
}
