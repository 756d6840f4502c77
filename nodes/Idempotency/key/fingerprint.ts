import { canonicalJson } from './canonicalJson';
import { eventBody } from './deriveKey';
import type { KeyInput } from './keyRule';
import { sha256Hex } from './sha256';

/** What a stored payload fingerprint is computed from ("Payload Fingerprint" option). */
export type FingerprintMode = 'off' | 'canonicalJson' | 'rawBody';

/**
 * A hash of the payload stored beside the key, so a later delivery with the same key and a different
 * body is flagged instead of silently treated as the same event. canonicalJson ignores key order and
 * whitespace; rawBody compares the exact bytes (falling back to canonical JSON when none arrived).
 */
export function payloadFingerprint(input: KeyInput, mode: FingerprintMode): string | null {
	if (mode === 'off') return null;
	if (mode === 'rawBody' && input.rawBody && input.rawBody.length > 0)
		return `raw:${sha256Hex(input.rawBody)}`;
	return `json:${sha256Hex(canonicalJson(eventBody(input.json).body ?? null))}`;
}
