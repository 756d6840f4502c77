import { ClaimError } from '../errors';
import { storedResponseOf } from '../response/storedResponse';
import type { ClaimOptions, ClaimOutcome, ClaimRequest } from './claimOutcome';
import { claimStatement, type ClaimShape } from './claimSql';
import type { ClaimTable } from './claimTable';
import { queryStatement } from './namedStatements';
import { readSingleAnswer } from './singleAnswer';
import {
	storedClaimToken,
	storedFingerprint,
	storedFingerprintsDiffer,
	type StoredValue,
} from './storedValues';
import { CLAIM_RETRY, withTransientRetry } from './transientErrors';

/**
 * A key's stored state, as a claim statement returns it (first_seen NULL: no row was found). A one-key
 * statement (singleAnswer) leaves null what its table cannot fill, and compares the fingerprint itself.
 */
interface StateRow {
	first_seen: Date | null;
	last_seen?: Date | null;
	deliveries?: number | null;
	processing?: boolean | null;
	lease_until?: Date | null;
	/** The row holds this claim's token: a takeover, or this statement's own lost earlier attempt. */
	mine?: boolean | null;
	fingerprint?: StoredValue | null;
	/** The stored fingerprint describes another payload than the offered one. */
	mismatch?: boolean | null;
	/** What Complete stored for the key (pg parses the json). */
	response?: unknown;
}

/** A row of a batch statement: a key it did not insert, or (key NULL) the summary of those it did. */
interface BatchRow extends StateRow {
	key: string | null;
	/** On the summary row: how many keys the statement inserted (they share its first_seen). */
	fresh: number | null;
}

/** A key the statement inserted: all the node does not know of it is the clock (and a lease's end). */
class FreshKey {
	constructor(
		readonly firstSeen: Date,
		readonly leaseUntil: Date | null,
	) {}
}

/** What a claim learned of each key: inserted by it, its stored row, or nothing yet (asked again). */
type Answer = FreshKey | StateRow | undefined;

/**
 * Claims distinct keys in one statement (for read-only repeats, rarely more) and returns their outcomes
 * in request order. Keys are sorted inside the statement so two batches that share keys lock them in the
 * same order and cannot deadlock. If the claim fails after it won some keys, those keys are released
 * before the error is raised, so the provider's retry finds them free.
 */
export async function claimKeys(
	table: ClaimTable,
	requests: ClaimRequest[],
	options: ClaimOptions,
): Promise<ClaimOutcome[]> {
	const outcomes: ClaimOutcome[] = new Array(requests.length);
	if (requests.length === 0) return outcomes;
	let decided = false;
	try {
		await new KeyClaim(table, requests, options, outcomes).run();
		decided = true;
		return outcomes;
	} finally {
		if (!decided) await releaseWonKeys(table, outcomes, options.token);
	}
}

class KeyClaim {
	private readonly mode: ClaimShape['mode'];
	private readonly token: StoredValue;
	/** Fingerprints as the table stores them, by request position (null: none offered). */
	private readonly fingerprints: Array<StoredValue | null>;

	constructor(
		private readonly table: ClaimTable,
		private readonly requests: ClaimRequest[],
		private readonly options: ClaimOptions,
		private readonly outcomes: ClaimOutcome[],
	) {
		const counting = options.countRepeats && table.capabilities.counters;
		this.mode = options.mode === 'lease' ? 'lease' : counting ? 'counting' : 'readOnly';
		this.token = storedClaimToken(table.layout, options.token);
		this.fingerprints = requests.map((request) =>
			request.fingerprint === null ? null : storedFingerprint(table.layout, request.fingerprint),
		);
	}

	async run(): Promise<void> {
		let pending = this.requests.map((_, position) => position);
		for (let round = 1; pending.length > 0; round++) {
			const { answers, lostAttempts } = await this.send(pending);
			const unsure: string[] = [];
			const unanswered: number[] = [];
			pending.forEach((position, i) => {
				const answer = answers[i];
				if (!answer) return void unanswered.push(position);
				const outcome = this.outcomeOf(position, answer);
				this.outcomes[position] = outcome;
				// An earlier attempt of this very statement may have committed before its answer was lost. With
				// a claim_token column our own token says so; without one, a key found "seen before" could be our
				// own lost win, and calling it a duplicate would mean it is never processed.
				if (lostAttempts > 0 && !outcome.won && !this.table.capabilities.leases)
					unsure.push(outcome.key);
			});
			if (unsure.length > 0) {
				const { schema, table } = this.table.ref;
				throw new ClaimError(
					`the connection to Postgres failed after the claim was sent, and table ${schema}.${table} has no claim_token column, ` +
						`so it cannot tell whether ${describeKeys(unsure)} ${unsure.length > 1 ? 'were' : 'was'} claimed by this delivery's lost attempt or by an earlier delivery. ` +
						'Nothing was routed. Turn on "Create Table If Missing" (it adds claim_token) to remove this risk.',
				);
			}
			pending = unanswered;
			if (pending.length === 0) break;
			// Only read-only repeats can miss a key (inserted by a concurrent delivery after the statement's
			// snapshot, or released in between); an upsert that misses one got a different key back.
			if (this.mode !== 'readOnly' || round === 3) {
				throw new ClaimError(
					`${describeKeys(pending.map((position) => this.requests[position].key))} came back from Postgres different from what was sent ` +
						'(or kept changing under every attempt); nothing was routed, try again',
				);
			}
		}
	}

	/** Sends the claim of the keys at these positions; answers in the same order. */
	private async send(positions: number[]): Promise<{ answers: Answer[]; lostAttempts: number }> {
		const single = positions.length === 1;
		const statement = claimStatement(this.table, { mode: this.mode, single });
		const fingerprints = positions.map((position) => this.fingerprints[position]);
		const values: unknown[] = single
			? [this.requests[positions[0]].key, fingerprints[0]]
			: [
					positions.map((position) => this.requests[position].key),
					fingerprints.some((fingerprint) => fingerprint !== null) ? fingerprints : null,
				];
		values.push(this.token, this.options.now ?? null);
		if (this.mode === 'lease') values.push(this.options.leaseSeconds);
		const { value, lostAttempts } = await withTransientRetry(
			this.table.pool,
			(client) => queryStatement(this.table.pool, client, statement, values),
			CLAIM_RETRY,
		);
		const answers = single
			? [singleAnswer(value.rows[0] as { answer: unknown[] } | undefined)]
			: batchAnswers(value.rows as BatchRow[], positions, this.requests);
		return { answers, lostAttempts };
	}

	private outcomeOf(position: number, answer: NonNullable<Answer>): ClaimOutcome {
		const { key } = this.requests[position];
		const { counters, leases } = this.table.capabilities;
		const lease = this.mode === 'lease';
		if (answer instanceof FreshKey) {
			return {
				key,
				won: true,
				reclaimed: false,
				status: lease ? 'processing' : 'completed',
				duplicateKind: null,
				mismatch: false,
				firstSeen: answer.firstSeen,
				lastSeen: counters ? answer.firstSeen : null,
				deliveries: counters ? 1 : null,
				leaseUntil: lease ? answer.leaseUntil : null,
				claimToken: leases ? this.options.token : null,
				response: null,
			};
		}
		const won = answer.mine === true;
		const processing = answer.processing === true;
		const mismatch =
			answer.mismatch ?? storedFingerprintsDiffer(answer.fingerprint, this.fingerprints[position]);
		return {
			key,
			won,
			reclaimed: won && lease,
			status: processing ? 'processing' : 'completed',
			duplicateKind: won ? null : processing ? 'in_progress' : 'completed',
			mismatch: !won && mismatch,
			firstSeen: answer.first_seen!,
			lastSeen: answer.last_seen ?? null,
			deliveries: this.mode === 'readOnly' ? null : (answer.deliveries ?? null),
			leaseUntil: lease ? (answer.lease_until ?? null) : null,
			claimToken: won && leases ? this.options.token : null,
			response: won || processing ? null : storedResponseOf(answer.response),
		};
	}
}

function singleAnswer(row: { answer: unknown[] } | undefined): Answer {
	if (!row) return undefined;
	const state = readSingleAnswer(row.answer);
	return state.fresh ? new FreshKey(state.first_seen!, state.lease_until) : state;
}

/**
 * Matches a batch's rows to its keys: a returned key is a repeat (or, without a row, not found), every
 * other key was inserted. The summary's count must be exactly the keys without a row.
 */
function batchAnswers(rows: BatchRow[], positions: number[], requests: ClaimRequest[]): Answer[] {
	let summary: BatchRow | undefined;
	const byKey = new Map<string, BatchRow>();
	for (const row of rows) {
		if (row.key === null) summary = row;
		else byKey.set(row.key, row);
	}
	if (!summary)
		throw new ClaimError(
			'Postgres answered the claim without its summary row; nothing was routed, try again',
		);
	const fresh = new FreshKey(summary.first_seen!, summary.lease_until ?? null);
	let freshCount = 0;
	const answers = positions.map((position): Answer => {
		const row = byKey.get(requests[position].key);
		if (row) return row.first_seen === null ? undefined : row;
		freshCount++;
		return fresh;
	});
	// A key that came back altered (a trigger, a collation) would pass for an inserted one: refuse instead.
	if (freshCount !== summary.fresh || byKey.size + freshCount > positions.length) {
		throw new ClaimError(
			`Postgres inserted ${summary.fresh} of the keys, but ${freshCount} came back without a row of their own: ` +
				'keys came back different from what was sent; nothing was routed, try again',
		);
	}
	return answers;
}

/** Deletes the keys these outcomes won, held by this token; errors are swallowed (the caller reports its own). */
export async function releaseWonKeys(
	table: ClaimTable,
	outcomes: ClaimOutcome[],
	token: string,
): Promise<void> {
	const won = outcomes.filter((outcome) => outcome?.won).map((outcome) => outcome.key);
	if (won.length === 0) return;
	const tokenCheck = table.capabilities.leases
		? ` AND claim_token = $2::${table.layout.tokenType}`
		: ` AND $2::${table.layout.tokenType} IS NOT NULL`;
	await table.pool
		.query(`DELETE FROM ${table.ref.qualified} WHERE key = ANY($1::text[])${tokenCheck}`, [
			won.sort(),
			storedClaimToken(table.layout, token),
		])
		// The connection that just failed is likely gone too; the original error is the one to report.
		.catch(() => undefined);
}

function describeKeys(keys: string[]): string {
	const shown = keys.slice(0, 3).map((key) => `"${key}"`);
	return `key${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 3 ? ` and ${keys.length - 3} more` : ''}`;
}
