import {
	fingerprintsDiffer,
	type ClaimOptions,
	type ClaimOutcome,
	type ClaimRequest,
} from './claimOutcome';
import type { Queryable } from './queryable';
import type { TableCapabilities } from './tableSchema';
import type { TableRef } from './tableRef';
import { withTransientRetry } from './transientErrors';

interface ClaimRow {
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
 * Claims distinct keys in as few round trips as the table allows. Keys are sorted so two batches that
 * share keys lock them in the same order and cannot deadlock.
 */
export async function claimKeys(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<Map<string, ClaimOutcome>> {
	if (requests.length === 0) return new Map();
	const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	if (options.mode === 'lease') return claimWithLease(db, ref, capabilities, sorted, options);
	return claimOnce(db, ref, capabilities, sorted, options);
}

/**
 * The seed's claim: `INSERT … ON CONFLICT (key) DO NOTHING RETURNING key`. A returned row is a new
 * event; for the others a second statement counts the delivery and reads what the table knows.
 */
async function claimOnce(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
	roundsLeft = 3,
): Promise<Map<string, ClaimOutcome>> {
	const columns = ['key', 'first_seen'];
	const values = ['u.k', 'n.now'];
	const add = (column: string, value: string) => {
		columns.push(column);
		values.push(value);
	};
	if (capabilities.counters) add('last_seen', 'n.now');
	if (capabilities.leases) add('claim_token', 'n.token');
	if (capabilities.fingerprint) add('fingerprint', 'u.f');
	const insertSql =
		`INSERT INTO ${ref.qualified} (${columns.join(', ')}) ` +
		`SELECT ${values.join(', ')} FROM unnest($1::text[], $2::text[]) AS u(k, f), ` +
		`(SELECT COALESCE($4::timestamptz, now()) AS now, $3::text AS token) AS n ORDER BY u.k COLLATE "C" ` +
		`ON CONFLICT (key) DO NOTHING RETURNING key, first_seen`;
	const keys = requests.map((request) => request.key);
	const inserted = await withTransientRetry(() =>
		db.query<ClaimRow>(insertSql, [
			keys,
			requests.map((request) => request.fingerprint),
			options.token,
			options.now ?? null,
		]),
	);

	const outcomes = new Map<string, ClaimOutcome>();
	for (const row of inserted.rows) {
		outcomes.set(row.key, {
			key: row.key,
			won: true,
			reclaimed: false,
			status: 'completed',
			duplicateKind: null,
			mismatch: false,
			firstSeen: row.first_seen,
			lastSeen: capabilities.counters ? row.first_seen : null,
			deliveries: capabilities.counters ? 1 : null,
			leaseUntil: null,
			claimToken: capabilities.leases ? options.token : null,
		});
	}
	const seenBefore = requests.filter((request) => !outcomes.has(request.key));
	if (seenBefore.length === 0) return outcomes;

	let answered = false;
	try {
		const rows = await readDuplicates(db, ref, capabilities, seenBefore, options);
		// A key that conflicted but is gone now was released in between: it is free, so claim it again.
		const releasedMeanwhile = seenBefore.filter((request) => !rows.has(request.key));
		if (releasedMeanwhile.length > 0 && roundsLeft > 0) {
			const again = await claimOnce(db, ref, capabilities, releasedMeanwhile, options, roundsLeft - 1);
			for (const [key, outcome] of again) outcomes.set(key, outcome);
		}
		for (const request of seenBefore) {
			if (outcomes.has(request.key)) continue;
			const row = rows.get(request.key);
			// Our own token means an earlier attempt of this very statement committed before its answer was lost.
			const ours = row?.claim_token === options.token;
			// Claim-once rows are final; a row another workflow claimed with a lease may still be processing.
			const status = row?.status ?? 'completed';
			outcomes.set(request.key, {
				key: request.key,
				won: ours,
				reclaimed: false,
				status,
				duplicateKind: ours ? null : status === 'processing' ? 'in_progress' : 'completed',
				mismatch: !ours && fingerprintsDiffer(row?.fingerprint, request.fingerprint),
				firstSeen: row?.first_seen ?? null,
				lastSeen: row?.last_seen ?? null,
				deliveries: row?.deliveries ?? null,
				leaseUntil: null,
				claimToken: ours ? options.token : null,
			});
		}
		answered = true;
	} finally {
		// Keys this call just won must not stay claimed by a delivery that is about to fail.
		if (!answered) await releaseWonKeys(db, ref, capabilities, [...outcomes.keys()], options.token);
	}
	return outcomes;
}

/** Counts a repeat delivery (when the table has counters) and returns the stored row; locks in key order. */
async function readDuplicates(
	db: Queryable,
	ref: TableRef,
	capabilities: TableCapabilities,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<Map<string, ClaimRow>> {
	const returned = ['e.key', 'e.first_seen'];
	if (capabilities.counters) returned.push('e.last_seen', 'e.deliveries');
	if (capabilities.leases) returned.push('e.status', 'e.claim_token');
	if (capabilities.fingerprint) returned.push('e.fingerprint');
	const keys = requests.map((request) => request.key);
	const [sql, values] = capabilities.counters
		? [
				`WITH targets AS (SELECT key FROM ${ref.qualified} WHERE key = ANY($1::text[]) ORDER BY key COLLATE "C" FOR UPDATE) ` +
					`UPDATE ${ref.qualified} AS e SET last_seen = COALESCE($2::timestamptz, now()), deliveries = e.deliveries + 1 ` +
					`FROM targets WHERE e.key = targets.key RETURNING ${returned.join(', ')}`,
				[keys, options.now ?? null],
			]
		: [`SELECT ${returned.join(', ')} FROM ${ref.qualified} AS e WHERE e.key = ANY($1::text[])`, [keys]];
	const result = await withTransientRetry(() => db.query<ClaimRow>(sql, values));
	return new Map(result.rows.map((row) => [row.key, row]));
}

/**
 * Claim with lease: one `INSERT … ON CONFLICT (key) DO UPDATE` that inserts new keys as `processing`
 * and, for a processing key whose lease has expired, hands the claim to this delivery. Row locks
 * make the takeover atomic: of many concurrent reclaimers exactly one sees the expired lease.
 */
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
	const sameFingerprintOrUnknown =
		'(e.fingerprint IS NULL OR EXCLUDED.fingerprint IS NULL OR ' +
		"split_part(e.fingerprint, ':', 1) <> split_part(EXCLUDED.fingerprint, ':', 1) OR e.fingerprint = EXCLUDED.fingerprint)";
	const takeover =
		`(e.status = 'processing' AND COALESCE(e.lease_until, '-infinity') <= EXCLUDED.last_seen AND ${sameFingerprintOrUnknown})`;
	const sql =
		`INSERT INTO ${ref.qualified} AS e (key, first_seen, last_seen, deliveries, status, lease_until, claim_token, fingerprint) ` +
		`SELECT u.k, n.now, n.now, 1, 'processing', n.now + make_interval(secs => $5), $3, u.f ` +
		`FROM unnest($1::text[], $2::text[]) AS u(k, f), (SELECT COALESCE($4::timestamptz, now()) AS now) AS n ` +
		`ORDER BY u.k COLLATE "C" ` +
		`ON CONFLICT (key) DO UPDATE SET last_seen = EXCLUDED.last_seen, deliveries = e.deliveries + 1, ` +
		`lease_until = CASE WHEN ${takeover} THEN EXCLUDED.lease_until ELSE e.lease_until END, ` +
		`claim_token = CASE WHEN ${takeover} THEN EXCLUDED.claim_token ELSE e.claim_token END ` +
		`RETURNING e.key, e.first_seen, e.last_seen, e.deliveries, e.status, e.lease_until, e.claim_token, e.fingerprint`;
	const result = await withTransientRetry(() =>
		db.query<ClaimRow>(sql, [
			requests.map((request) => request.key),
			requests.map((request) => request.fingerprint),
			options.token,
			options.now ?? null,
			options.leaseSeconds,
		]),
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
	keys: string[],
	token: string,
): Promise<void> {
	if (keys.length === 0) return;
	const tokenCheck = capabilities.leases ? ' AND claim_token = $2' : ' AND $2::text IS NOT NULL';
	await db
		.query(`DELETE FROM ${ref.qualified} WHERE key = ANY($1::text[])${tokenCheck}`, [keys, token])
		// The connection that just failed is likely gone too; the original error is the one to report.
		.catch(() => undefined);
}
