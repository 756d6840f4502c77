import { parseUtcTimestamp } from '../../transport/timestampParser';

/**
 * A key's stored state as every claim statement answers it, one- or many-key alike: the one description
 * from the SQL to the claim's outcome. A one-key statement answers one json array, `fresh` and then these
 * columns in this order; a batch statement returns them as typed columns of the same names. What a table
 * or a mode cannot fill is null.
 */
export const STATE_COLUMNS = [
	'first_seen',
	'last_seen',
	'deliveries',
	'processing',
	'mine',
	'lease_until',
	'mismatch',
	'response',
] as const;

export type StateColumn = (typeof STATE_COLUMNS)[number];

/** Each column's Postgres type: what a row without a stored state (a fresh key, a summary) casts NULL to. */
export const STATE_TYPES: Record<StateColumn, string> = {
	first_seen: 'timestamptz',
	last_seen: 'timestamptz',
	deliveries: 'integer',
	processing: 'boolean',
	mine: 'boolean',
	lease_until: 'timestamptz',
	mismatch: 'boolean',
	response: 'json',
};

export interface ClaimStateRow {
	/** Null when no row was found (a read-only repeat whose key came after the statement's snapshot). */
	first_seen: Date | null;
	last_seen: Date | null;
	deliveries: number | null;
	processing: boolean | null;
	/** The row holds this claim's ID: a takeover, or this very statement's lost earlier attempt. */
	mine: boolean | null;
	lease_until: Date | null;
	/** The stored fingerprint describes another payload than the offered one. */
	mismatch: boolean | null;
	/** What Complete stored for the key (pg parses the json). */
	response: unknown;
}

/**
 * Reads a one-key statement's json array (pg has parsed the json). One column, not nine: pg's JavaScript
 * costs per column of every answer (it reads the column's description, picks a parser, builds the row)
 * and parses each timestamp column with regular expressions; nine typed columns measured ~11 µs of pg's
 * JavaScript per claim, one json array ~7 µs, a bare insert ~5 µs. Its timestamps are UTC text without a
 * zone (`… AT TIME ZONE 'UTC'`), so the session's TimeZone never matters.
 */
export function readSingleAnswer(answer: unknown[]): { fresh: boolean; state: ClaimStateRow } {
	const state: Record<string, unknown> = {};
	STATE_COLUMNS.forEach((column, index) => {
		const value = answer[index + 1];
		state[column] =
			STATE_TYPES[column] === 'timestamptz' && value !== null
				? parseUtcTimestamp(value as string)
				: value;
	});
	return { fresh: answer[0] as boolean, state: state as unknown as ClaimStateRow };
}
