import { CLAIM_ID_BYTES } from './claimId';
import type { TableLayout } from './tableLayout';

/** A claim ID or fingerprint as a parameter for the table's column: text as it is, or bytes. */
export type StoredValue = string | Buffer;

/**
 * The claim ID as a compact table stores it: the 12 bytes a claim ID made by the node spells in base64url
 * (16 characters). Any other text (a claim ID typed by hand, a UUID from a test) is stored as its UTF-8
 * bytes, so it still matches itself and nothing the node made.
 */
export function storedClaimId(layout: TableLayout, claimId: string): StoredValue {
	if (layout.claimIdType === 'text') return claimId;
	const bytes = Buffer.from(claimId, 'base64url');
	return bytes.length === CLAIM_ID_BYTES && bytes.toString('base64url') === claimId
		? bytes
		: Buffer.from(claimId, 'utf8');
}

/** The kind byte a compact fingerprint starts with: fingerprints of different kinds are never compared. */
const FINGERPRINT_KINDS: Record<string, number> = { json: 1, raw: 2 };
const HEX_HASH = /^[0-9a-f]{32}$/;

/**
 * The fingerprint as a compact table stores it: one byte for its kind (`json:` or `raw:`), then the 16
 * bytes its 32 hex digits spell (17 bytes, against 37 characters of text). Text of another form is kept
 * as its UTF-8 bytes after the kind byte, so it still compares with itself.
 */
export function storedFingerprint(layout: TableLayout, fingerprint: string): StoredValue {
	if (layout.fingerprintType === 'text') return fingerprint;
	const colon = fingerprint.indexOf(':');
	const kind = FINGERPRINT_KINDS[fingerprint.slice(0, colon)] ?? 0;
	const hash = kind === 0 ? fingerprint : fingerprint.slice(colon + 1);
	const body = HEX_HASH.test(hash) ? Buffer.from(hash, 'hex') : Buffer.from(hash, 'utf8');
	return Buffer.concat([Buffer.of(kind), body]);
}

/**
 * Fingerprints are comparable only when computed the same way (`raw:` vs `json:`). Rows stored before
 * fingerprints were shortened hold the whole SHA-256: a fingerprint is the same when one is the start of
 * the other.
 */
export function fingerprintsDiffer(
	stored: string | null | undefined,
	offered: string | null,
): boolean {
	if (!stored || !offered) return false;
	const kind = (fingerprint: string) => fingerprint.slice(0, fingerprint.indexOf(':') + 1);
	return (
		kind(stored) === kind(offered) && !stored.startsWith(offered) && !offered.startsWith(stored)
	);
}
