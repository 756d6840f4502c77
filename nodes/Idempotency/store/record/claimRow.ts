import type { ClaimStatus } from './claimStatus';
import type { StoredValue } from './storedValues';

/**
 * A claim table's row, one per key, as pg reads it. What a table lacks (a table made with only key and
 * first_seen, a compact table's status) reads as absent; what a claim has not needed yet is NULL.
 */
export interface ClaimRow {
	key: string;
	first_seen: Date;
	last_seen: Date | null;
	deliveries: number | null;
	/** The original layout only: a compact row is processing exactly while lease_until is set. */
	status?: ClaimStatus;
	lease_until: Date | null;
	claim_token: StoredValue | null;
	fingerprint: StoredValue | null;
	/** pg parses the json. */
	response: unknown;
}

export type ClaimColumnName = keyof ClaimRow;

/**
 * What a column serves: every claim table has the `required` ones; the others come in parts, and an
 * operation that needs a part needs every column of it (store/table/tableSchema's TableCapabilities).
 */
export type ClaimColumnPart = 'required' | 'counters' | 'leases' | 'fingerprint' | 'responses';

export interface ClaimColumn {
	part: ClaimColumnPart;
	/** Its type in a compact table (the one a new table gets); null where the compact layout has no such column. */
	compact: string | null;
	/** Its type in the original layout: what a table made earlier is given when it lacks the column. */
	original: string;
	meaning: string;
}

/**
 * Every column of a claim row, once, in the order a table made earlier is given the ones it lacks. The
 * DDL is built from it (store/table/tableSchema.ts); a new table orders them for its row's alignment.
 * A compact row NULLs every column until a claim needs it, and a NULL costs it nothing: with at most 8
 * columns its null bitmap stays inside the 24-byte row header (a 9th would make every row holding a NULL
 * 8 bytes longer), and the compact layout has 8.
 */
export const CLAIM_COLUMNS: { readonly [name in ClaimColumnName]-?: ClaimColumn } = {
	key: {
		part: 'required',
		compact: 'text PRIMARY KEY',
		original: 'text PRIMARY KEY',
		meaning: 'the idempotency key, exactly as the node derived it',
	},
	first_seen: {
		part: 'required',
		compact: 'timestamptz NOT NULL DEFAULT now()',
		original: 'timestamptz NOT NULL DEFAULT now()',
		meaning: 'the first delivery: what Purge ages keys by',
	},
	last_seen: {
		part: 'counters',
		compact: 'timestamptz',
		original: 'timestamptz',
		meaning: 'the last delivery; in a compact row NULL until the first repeat',
	},
	deliveries: {
		part: 'counters',
		compact: 'integer',
		original: 'integer NOT NULL DEFAULT 1',
		meaning: 'deliveries of the key; in a compact row NULL means one',
	},
	status: {
		part: 'leases',
		compact: null,
		// Rows that predate this column were claimed once and are final: 'completed' is their true state.
		original: "text NOT NULL DEFAULT 'completed'",
		meaning: 'processing or completed (claimStatus); a compact row says it with lease_until',
	},
	lease_until: {
		part: 'leases',
		compact: 'timestamptz',
		original: 'timestamptz',
		meaning:
			'while a leased claim is processing, when its lease ends (infinity: a parked dead letter); NULL once completed',
	},
	claim_token: {
		part: 'leases',
		compact: 'bytea',
		original: 'text',
		meaning:
			"the holder's claim ID, while a claim is held (a Claim Once claim keeps it); a compact row keeps its 12 bytes",
	},
	fingerprint: {
		part: 'fingerprint',
		compact: 'bytea',
		original: 'text',
		meaning:
			"the payload's fingerprint; a compact row keeps a kind byte and 128 bits of its SHA-256",
	},
	response: {
		part: 'responses',
		compact: 'json',
		original: 'json',
		// json, not jsonb, keeps the text as written, so the replay is byte for byte the first answer.
		meaning:
			'the answer Complete stored (status code, named headers, body text), replayed to repeats',
	},
};

/** The columns of the given parts, in CLAIM_COLUMNS' order. */
export function claimColumnsOf(...parts: ClaimColumnPart[]): ClaimColumnName[] {
	return (Object.keys(CLAIM_COLUMNS) as ClaimColumnName[]).filter((name) =>
		parts.includes(CLAIM_COLUMNS[name].part),
	);
}
