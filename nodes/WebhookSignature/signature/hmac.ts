import { createHmac, timingSafeEqual } from 'node:crypto';

export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** HMAC over the concatenation of `parts`, fed as bytes: the raw body is never turned into text. */
export function hmac(
	algorithm: HmacAlgorithm,
	key: string | Uint8Array,
	parts: Array<string | Uint8Array>,
): Buffer {
	const mac = createHmac(algorithm, key);
	for (const part of parts) mac.update(part);
	return mac.digest();
}

/**
 * Whether any candidate equals `expected`, each compared in constant time. Lengths are public (every
 * digest of one algorithm has the same length), so a candidate of another length is simply no match.
 */
export function matchesAny(expected: Uint8Array, candidates: Uint8Array[]): boolean {
	let matched = false;
	for (const candidate of candidates) {
		if (candidate.length === expected.length && timingSafeEqual(candidate, expected))
			matched = true;
	}
	return matched;
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict decoders: Buffer.from() skips bad characters, which would let a malformed value through. */
export function decodeHex(text: string): Buffer | undefined {
	return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
}

export function decodeBase64(text: string): Buffer | undefined {
	return text !== '' && BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}
