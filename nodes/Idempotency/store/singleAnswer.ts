import { parseUtcTimestamp } from '../transport/timestampParser';

/**
 * What a one-key claim statement answers: one row holding one json array, `answer`, with these slots in
 * this order (a slot the table or mode cannot fill is null). One column because pg's own JavaScript
 * costs per column of every answer (it reads the column's description, picks a parser, builds the row)
 * and parses each timestamp column with regular expressions: nine typed columns measured ~11 µs of pg's
 * JavaScript per claim, the same state as one json array ~7 µs, against ~5 µs for a bare insert.
 * Timestamps are UTC text without a zone (`… AT TIME ZONE 'UTC'`), so the session's TimeZone never
 * matters.
 */
export const ANSWER_SLOTS = [
	/** This statement inserted the key. */
	'fresh',
	'first_seen',
	'last_seen',
	'deliveries',
	'processing',
	/** The row holds this claim's token: a takeover, or this statement's own lost earlier attempt. */
	'mine',
	'lease_until',
	/** The stored fingerprint describes another payload than the offered one. */
	'mismatch',
	/** What Complete stored for the key. */
	'response',
] as const;

export type AnswerSlot = (typeof ANSWER_SLOTS)[number];

/** The answer as the rest of the claim reads it: a key's stored state (or, when fresh, the clock). */
export interface SingleRow {
	fresh: boolean;
	first_seen: Date | null;
	last_seen: Date | null;
	deliveries: number | null;
	processing: boolean | null;
	mine: boolean | null;
	lease_until: Date | null;
	mismatch: boolean | null;
	response: unknown;
}

const slot = (name: AnswerSlot) => ANSWER_SLOTS.indexOf(name);
const FRESH = slot('fresh');
const FIRST_SEEN = slot('first_seen');
const LAST_SEEN = slot('last_seen');
const DELIVERIES = slot('deliveries');
const PROCESSING = slot('processing');
const MINE = slot('mine');
const LEASE_UNTIL = slot('lease_until');
const MISMATCH = slot('mismatch');
const RESPONSE = slot('response');

/** Reads the json array of a one-key statement (pg has parsed the json). */
export function readSingleAnswer(answer: unknown[]): SingleRow {
	return {
		fresh: answer[FRESH] as boolean,
		first_seen: timestampOf(answer[FIRST_SEEN]),
		last_seen: timestampOf(answer[LAST_SEEN]),
		deliveries: answer[DELIVERIES] as number | null,
		processing: answer[PROCESSING] as boolean | null,
		mine: answer[MINE] as boolean | null,
		lease_until: timestampOf(answer[LEASE_UNTIL]),
		mismatch: answer[MISMATCH] as boolean | null,
		response: answer[RESPONSE],
	};
}

function timestampOf(value: unknown): Date | null {
	return value === null ? null : parseUtcTimestamp(value as string);
}
