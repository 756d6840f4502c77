import { ClaimError } from '../../errors';
import { storedResponseOf } from '../../response/storedResponse';
import {
	KEPT_EVENT_COLUMNS,
	type ClaimOptions,
	type ClaimOutcome,
	type ClaimRequest,
} from '../record/claimOutcome';
import { claimStatement, type ClaimShape } from './claimSql';
import type { ClaimTable } from '../table/claimTable';
import { eventTableRef, scopeColumnMissing } from '../inbox/eventTable';
import { queryStatement } from '../statements/namedStatements';
import { readSingleAnswer, type ClaimStateRow } from '../record/claimState';
import { storedClaimId, storedFingerprint, type StoredValue } from '../record/storedValues';
import { CLAIM_RETRY, withTransientRetry } from '../statements/transientErrors';

/** A row of a batch statement: a key it did not insert, or (key NULL) the summary of those it did. */
interface BatchRow extends ClaimStateRow {
	key: string | null;
	/** On the summary row: how many keys the statement inserted (they share its first_seen). */
	fresh: number | null;
}

/**
 * What a claim learned of a key: the state the statement answered (claimState's row; for a key it inserted,
 * only the clock and a lease's end, all the node does not know of it) and whether it inserted the key.
 * Undefined: nothing yet (asked again).
 */
type Answer = { fresh: boolean; state: ClaimStateRow } | undefined;

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
		if (!decided) await releaseWonKeys(table, outcomes, options.claimId);
	}
}

class KeyClaim {
	private readonly mode: ClaimShape['mode'];
	private readonly claimId: StoredValue;
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
		this.claimId = storedClaimId(table.layout, options.claimId);
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
				// a claim_token column our own claim ID says so; without one, a key found "seen before" could be our
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
		const keepEvents = this.mode === 'lease' && this.requests.some((request) => request.event);
		const single = positions.length === 1;
		const statement = claimStatement(this.table, { mode: this.mode, single, keepEvents });
		const fingerprints = positions.map((position) => this.fingerprints[position]);
		const values: unknown[] = single
			? [this.requests[positions[0]].key, fingerprints[0]]
			: [
					positions.map((position) => this.requests[position].key),
					fingerprints.some((fingerprint) => fingerprint !== null) ? fingerprints : null,
				];
		values.push(this.claimId, this.options.now ?? null);
		if (this.mode === 'lease') values.push(this.options.leaseSeconds);
		if (keepEvents) {
			const events = positions.map((position) => this.requests[position].event);
			if (!this.table.capabilities.eventScope && events.some((event) => event?.scope))
				throw scopeColumnMissing(this.table.ref);
			// A key without an event to keep (none offered) inserts nothing: body is NOT NULL.
			const columns = KEPT_EVENT_COLUMNS.map(({ field }) =>
				events.map((event) => event?.[field] ?? null),
			);
			values.push(...(single ? columns.map(([value]) => value) : columns));
			values.push(this.options.maxAttempts ?? null);
		}
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

	private outcomeOf(position: number, { fresh, state }: NonNullable<Answer>): ClaimOutcome {
		const { key } = this.requests[position];
		const { counters, leases } = this.table.capabilities;
		const lease = this.mode === 'lease';
		if (fresh) {
			return {
				key,
				won: true,
				reclaimed: false,
				status: lease ? 'processing' : 'completed',
				duplicateKind: null,
				mismatch: false,
				firstSeen: state.first_seen!,
				lastSeen: counters ? state.first_seen : null,
				deliveries: counters ? 1 : null,
				leaseUntil: lease ? (state.lease_until ?? null) : null,
				claimId: leases ? this.options.claimId : null,
				response: null,
			};
		}
		const won = state.mine === true;
		const processing = state.processing === true;
		const mismatch = state.mismatch === true;
		return {
			key,
			won,
			reclaimed: won && lease,
			status: processing ? 'processing' : 'completed',
			duplicateKind: won ? null : processing ? 'in_progress' : 'completed',
			mismatch: !won && mismatch,
			firstSeen: state.first_seen!,
			lastSeen: state.last_seen ?? null,
			deliveries: this.mode === 'readOnly' ? null : (state.deliveries ?? null),
			leaseUntil: lease ? (state.lease_until ?? null) : null,
			claimId: won && leases ? this.options.claimId : null,
			response: won || processing ? null : storedResponseOf(state.response),
		};
	}
}

function singleAnswer(row: { answer: unknown[] } | undefined): Answer {
	return row ? readSingleAnswer(row.answer) : undefined;
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
	// Every key the statement inserted shares the summary's clock (and lease end).
	const fresh = { fresh: true, state: summary };
	let freshCount = 0;
	const answers = positions.map((position): Answer => {
		const row = byKey.get(requests[position].key);
		if (row) return row.first_seen === null ? undefined : { fresh: false, state: row };
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

/** Deletes the keys these outcomes won, held by this claim ID; errors are swallowed (the caller reports its own). */
export async function releaseWonKeys(
	table: ClaimTable,
	outcomes: ClaimOutcome[],
	claimId: string,
): Promise<void> {
	const won = outcomes.filter((outcome) => outcome?.won).map((outcome) => outcome.key);
	if (won.length === 0) return;
	const tokenCheck = table.capabilities.leases
		? ` AND claim_token = $2::${table.layout.claimIdType}`
		: ` AND $2::${table.layout.claimIdType} IS NOT NULL`;
	// A kept event goes with its claim, in the same statement.
	const events = table.capabilities.events
		? `, dropped AS (DELETE FROM ${eventTableRef(table.ref).qualified} v USING released r WHERE v.key = r.key) SELECT 1`
		: ' SELECT 1';
	await table.pool
		.query(
			`WITH released AS (DELETE FROM ${table.ref.qualified} WHERE key = ANY($1::text[])${tokenCheck} RETURNING key)${events}`,
			[won.sort(), storedClaimId(table.layout, claimId)],
		)
		// The connection that just failed is likely gone too; the original error is the one to report.
		.catch(() => undefined);
}

function describeKeys(keys: string[]): string {
	const shown = keys.slice(0, 3).map((key) => `"${key}"`);
	return `key${keys.length > 1 ? 's' : ''} ${shown.join(', ')}${keys.length > 3 ? ` and ${keys.length - 3} more` : ''}`;
}
