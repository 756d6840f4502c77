import {
	fingerprintsDiffer,
	type ClaimOptions,
	type ClaimOutcome,
	type ClaimRequest,
} from './claimOutcome';
import { claimOnceStatement, claimWithLeaseStatement } from './claimSql';
import type { Queryable } from './queryable';
import type { TableCapabilities } from './tableSchema';
import type { TableRef } from './tableRef';
import { withTransientRetry } from './transientErrors';

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

export class LeaseColumnsMissingError extends Error {}

/**
 * Claims distinct keys in one statement (rarely two, see claimOnce). Keys are sorted inside the
 * statement so two batches that share keys lock them in the same order and cannot deadlock.
 */
export async function claimKeys(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<Map<string, ClaimOutcome>> {
	if (requests.length === 0) return new Map();
	if (options.mode === 'lease') return claimWithLease(db, ref, capabilities, requests, options);
	return claimOnce(db, ref, capabilities, requests, options);
}

/**
 * The seed's claim, `INSERT … ON CONFLICT (key) DO NOTHING`, plus counting the repeats, in one round
 * trip. A key that a concurrent delivery inserted after this statement began, or that was released in
 * between, is asked about again with a fresh snapshot.
 */
async function claimOnce(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
	roundsLeft = 3,
): Promise<Map<string, ClaimOutcome>> {
	const statement = claimOnceStatement(ref, capabilities);
	const result = await withTransientRetry(() =>
		db.query<ClaimRow>({
			...statement,
			values: [requests.map((r) => r.key), requests.map((r) => r.fingerprint), options.token, options.now ?? null],
		}),
	);
	const rows = new Map(result.rows.map((row) => [row.key, row]));
	const outcomes = new Map<string, ClaimOutcome>();
	for (const request of requests) {
		const row = rows.get(request.key);
		if (row) outcomes.set(request.key, onceOutcome(request, row, capabilities, options));
	}
	const unanswered = requests.filter((request) => !rows.has(request.key));
	if (unanswered.length === 0) return outcomes;
	if (roundsLeft === 0) {
		throw new Error(`key "${unanswered[0].key}" changed under every claim attempt (claimed and released repeatedly); try again`);
	}

	let answered = false;
	try {
		const again = await claimOnce(db, ref, capabilities, unanswered, options, roundsLeft - 1);
		for (const [key, outcome] of again) outcomes.set(key, outcome);
		answered = true;
	} finally {
		// Keys this call already won must not stay claimed by a delivery that is about to fail.
		if (!answered) await releaseWonKeys(db, ref, capabilities, outcomes, options.token);
	}
	return outcomes;
}

function onceOutcome(request: ClaimRequest, row: ClaimRow, capabilities: TableCapabilities, options: ClaimOptions): ClaimOutcome {
	// Our own token on a repeat means an earlier attempt of this statement committed before its answer was lost.
	const won = row.claimed === true || (row.claim_token != null && row.claim_token === options.token);
	// Claim-once rows are final; a row another workflow claimed with a lease may still be processing.
	const status = row.claimed ? 'completed' : (row.status ?? 'completed');
	return {
		key: request.key,
		won,
		reclaimed: false,
		status,
		duplicateKind: won ? null : status === 'processing' ? 'in_progress' : 'completed',
		mismatch: !won && fingerprintsDiffer(row.fingerprint, request.fingerprint),
		firstSeen: row.first_seen,
		lastSeen: row.claimed ? (capabilities.counters ? row.first_seen : null) : (row.last_seen ?? null),
		deliveries: row.claimed ? (capabilities.counters ? 1 : null) : (row.deliveries ?? null),
		leaseUntil: null,
		claimToken: won && capabilities.leases ? options.token : null,
	};
}

async function claimWithLease(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<Map<string, ClaimOutcome>> {
	if (!capabilities.counters || !capabilities.leases || !capabilities.fingerprint) {
		throw new LeaseColumnsMissingError(
			`table ${ref.schema}.${ref.table} lacks the lease columns (last_seen, deliveries, status, lease_until, claim_token, fingerprint); ` +
				'turn on "Create Table If Missing" once (it only adds columns) or run the ALTER TABLE lines in workflows/processed_events.sql',
		);
	}
	const result = await withTransientRetry(() =>
		db.query<ClaimRow>({
			...claimWithLeaseStatement(ref),
			values: [
				requests.map((r) => r.key),
				requests.map((r) => r.fingerprint),
				options.token,
				options.now ?? null,
				options.leaseSeconds,
			],
		}),
	);
	const rows = new Map(result.rows.map((row) => [row.key, row]));
	const outcomes = new Map<string, ClaimOutcome>();
	for (const request of requests) {
		const row = rows.get(request.key)!;
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
	return outcomes;
}

async function releaseWonKeys(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	outcomes: Map<string, ClaimOutcome>,
	token: string,
): Promise<void> {
	const won = [...outcomes.values()].filter((outcome) => outcome.won).map((outcome) => outcome.key);
	if (won.length === 0) return;
	const tokenCheck = capabilities.leases ? ' AND claim_token = $2' : ' AND $2::text IS NOT NULL';
	await db
		.query(`DELETE FROM ${ref.qualified} WHERE key = ANY($1::text[])${tokenCheck}`, [won, token])
		// The connection that just failed is likely gone too; the original error is the one to report.
		.catch(() => undefined);
}
