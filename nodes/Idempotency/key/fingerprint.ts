import { canonicalJson } from './canonicalJson';
import { eventBody } from './deriveKey';
import type { KeyInput } from './keyRule';
import { sha256Hex } from './sha256';

/** What a stored payload fingerprint is computed from ("Payload Fingerprint" option). */
export type FingerprintMode = 'off' | 'canonicalJson' | 'rawBody';

/**
 * Hex digits kept of the SHA-256: 128 bits tell two payloads apart as surely as 256 (finding a second
 * payload with the same fingerprint takes ~2^128 tries) at 32 fewer bytes in every row that keeps one.
 */
const FINGERPRINT_HEX_DIGITS = 32;

const hash = (data: string | Uint8Array) => sha256Hex(data).slice(0, FINGERPRINT_HEX_DIGITS);

/**
 * A hash of the payload stored beside the key, so a later delivery with the same key and a different
 * body is flagged instead of silently treated as the same event. canonicalJson ignores key order and
 * whitespace; rawBody compares the exact bytes (falling back to canonical JSON when none arrived).
 */
export function payloadFingerprint(input: KeyInput, mode: FingerprintMode): string | null {
	if (mode === 'off') return null;
	if (mode === 'rawBody' && input.rawBody && input.rawBody.length > 0)
		return `raw:${hash(input.rawBody)}`;
	return `json:${hash(canonicalJson(eventBody(input.json).body ?? null))}`;
}
