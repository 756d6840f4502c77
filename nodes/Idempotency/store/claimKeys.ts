import { ClaimError } from '../errors';
import {
	fingerprintsDiffer,
	type ClaimOptions,
	type ClaimOutcome,
	type ClaimRequest,
} from './claimOutcome';
import {
	claimOnceCountingStatement,
	claimOnceReadOnlyStatement,
	claimWithLeaseStatement,
	type NamedStatement,
} from './claimSql';
import type { ClaimTable } from './claimTable';
import { queryStatement } from './namedStatements';
import { CLAIM_RETRY, withTransientRetry } from './transientErrors';

interface ClaimRow {
	claimed?: boolean;
	key: string;
	first_seen: Date;
	last_seen?: Date | null;
	deliveries?: number | null;
	status?: 'completed' | 'processing';
	lease_until?: Date | null;
	claim_token?: string | null;
	fingerprint?: string | null;
}

/**
 * Claims distinct keys in one statement (for read-only repeats, rarely more). Keys are sorted inside
 * the statement so two batches that share keys lock them in the same order and cannot deadlock. If the
 * claim fails after it won some keys, those keys are released before the error is raised, so the
 * provider's retry finds them free.
 */
export async function claimKeys(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<Map<string, ClaimOutcome>> {
	const outcomes = new Map<string, ClaimOutcome>();
	if (requests.length === 0) return outcomes;
	let decided = false;
	try {
		if (options.mode === 'lease') await claimWithLease(table, requests, options, outcomes);
		else await claimOnce(table, requests, options, outcomes);
		decided = true;
		return outcomes;
	} finally {
		if (!decided) await releaseWonKeys(table, outcomes, options.token);
	}
}

async function claimOnce(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
	outcomes: Map<string, ClaimOutcome>,
): Promise<void> {
	const { capabilities } = table;
	const counting = options.countRepeats && capabilities.counters;
	const statement = counting
		? claimOnceCountingStatement(table.ref, capabilities)
		: claimOnceReadOnlyStatement(table.ref, capabilities);
	let pending = requests;
	for (let round = 1; pending.length > 0; round++) {
		const { rows, lostAttempts } = await runClaim(table, statement, pending, options);
		const unsure: string[] = [];
		for (const request of pending) {
			const row = rows.get(request.key);
			if (!row) continue;
			const outcome = onceOutcome(request, row, table, options);
			outcomes.set(request.key, outcome);
			// An earlier attempt of this very statement may have committed before its answer was lost. With
			// a claim_token column our own token says so; without one, a key found "seen before" could be our
			// own lost win, and calling it a duplicate would mean it is never processed.
			if (lostAttempts > 0 && !outcome.won && !capabilities.leases) unsure.push(request.key);
		}
		if (unsure.length > 0) {
			throw new ClaimError(
				`the connection to Postgres failed after the claim was sent, and table ${table.ref.schema}.${table.ref.table} has no claim_token column, ` +
					`so it cannot tell whether ${describeKeys(unsure)} ${unsure.length > 1 ? 'were' : 'was'} claimed by this delivery's lost attempt or by an earlier delivery. ` +
					'Nothing was routed. Turn on "Create Table If Missing" (it adds claim_token) to remove this risk.',
			);
		}
		pending = pending.filter((request) => !rows.has(request.key));
		if (pending.length === 0) break;
		// Only read-only repeats can miss a key (inserted by a concurrent delivery after the statement's
		// snapshot, or released in between); a counting claim that misses one got a different key back.
		if (counting || round === 3) {
			throw new ClaimError(
				`${describeKeys(pending.map((request) => request.key))} came back from Postgres different from what was sent ` +
					'(or kept changing under every attempt); nothing was routed, try again',
			);
		}
	}
}

function onceOutcome(
	request: ClaimRequest,
	row: ClaimRow,
	table: ClaimTable,
	options: ClaimOptions,
): ClaimOutcome {
	const { capabilities } = table;
	const won =
		row.claimed === true || (row.claim_token != null && row.claim_token === options.token);
	// Claim-once rows are final; a row another workflow claimed with a lease may still be processing.
	const status = row.claimed ? 'completed' : (row.status ?? 'completed');
	const counted = options.countRepeats && capabilities.counters;
	return {
		key: request.key,
		won,
		reclaimed: false,
		status,
		duplicateKind: won ? null : status === 'processing' ? 'in_progress' : 'completed',
		mismatch: !won && fingerprintsDiffer(row.fingerprint, request.fingerprint),
		firstSeen: row.first_seen,
		lastSeen: row.claimed
			? capabilities.counters
				? row.first_seen
				: null
			: (row.last_seen ?? null),
		deliveries: row.claimed
			? capabilities.counters
				? 1
				: null
			: counted
				? (row.deliveries ?? null)
				: null,
		leaseUntil: null,
		claimToken: won && capabilities.leases ? options.token : null,
	};
}

async function claimWithLease(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
	outcomes: Map<string, ClaimOutcome>,
): Promise<void> {
	const { rows } = await runClaim(table, claimWithLeaseStatement(table.ref), requests, options, [
		options.leaseSeconds,
	]);
	for (const request of requests) {
		const row = rows.get(request.key);
		if (!row) continue;
		const won = row.claim_token === options.token;
		const status = row.status ?? 'processing';
		outcomes.set(request.key, {
			key: request.key,
			won,
			reclaimed: won && (row.deliveries ?? 1) > 1,
			status,
			duplicateKind: won ? null : status === 'completed' ? 'completed' : 'in_progress',
			mismatch: !won && fingerprintsDiffer(row.fingerprint, request.fingerprint),
			firstSeen: row.first_seen,
			lastSeen: row.last_seen ?? null,
			deliveries: row.deliveries ?? null,
			leaseUntil: row.lease_until ?? null,
			claimToken: won ? options.token : null,
		});
	}
	const missing = requests
		.filter((request) => !rows.has(request.key))
		.map((request) => request.key);
	if (missing.length > 0) {
		throw new ClaimError(
			`${describeKeys(missing)} came back from Postgres different from what was sent; nothing was routed, try again`,
		);
	}
}

/** Parameters of every claim statement: $1 keys, $2 fingerprints, $3 claim token, $4 clock, then extras. */
async function runClaim(
	table: ClaimTable,
	statement: NamedStatement,
	requests: ClaimRequest[],
	options: ClaimOptions,
	extra: unknown[] = [],
): Promise<{ rows: Map<string, ClaimRow>; lostAttempts: number }> {
	const values = [
		requests.map((r) => r.key),
		requests.map((r) => r.fingerprint),
		options.token,
		options.now ?? null,
		...extra,
	];
	const { value, lostAttempts } = await withTransientRetry(
		table.pool,
		(client) => queryStatement<ClaimRow>(table.pool, client, statement, values),
		CLAIM_RETRY,
	);
	return { rows: new Map(value.rows.map((row) => [row.key, row])), lostAttempts };
}

async function releaseWonKeys(
	table: ClaimTable,
	outcomes: Map<string, ClaimOutcome>,
	token: string,
): Promise<void> {
	const won = [...outcomes.values()].filter((outcome) => outcome.won).map((outcome) => outcome.key);
	if (won.length === 0) return;
	const tokenCheck = table.capabilities.leases
		? ' AND claim_token = $2'
		: ' AND $2::text IS NOT NULL';
	await table.pool
		.query(`DELETE FROM ${table.ref.qualified} WHERE key = ANY($1::text[])${tokenCheck}`, [
			won.sort(),
			token,
		])
		// The connection that just failed is likely gone too; the original error is the one to report.
		.catch(() => undefined);
}

function describeKeys(keys: string[]): string {
	const shown = keys.slice(0, 3).map((key) => `"${key}"`);
	return `key${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 3 ? ` and ${keys.length - 3} more` : ''}`;
}
