import { refuse, type SignatureVerdict } from './verdict';

const UNIX_SECONDS = /^\d{1,12}$/;

/** A signed Unix timestamp in seconds, or the verdict that refuses it. */
export function parseUnixSeconds(
	scheme: string,
	where: string,
	text: string,
): { ok: true; seconds: number } | { ok: false; verdict: SignatureVerdict } {
	if (!UNIX_SECONDS.test(text)) {
		return {
			ok: false,
			verdict: refuse(scheme, 'malformed_header', `${where} is not a Unix timestamp in seconds`),
		};
	}
	return { ok: true, seconds: Number(text) };
}

/**
 * Checked both ways: an old timestamp is a replay, one from the future is a clock problem or a forgery
 * prepared in advance. `undefined` means within tolerance.
 */
export function checkFreshness(
	scheme: string,
	signedAt: number,
	nowSeconds: number,
	toleranceSeconds: number,
): SignatureVerdict | undefined {
	const age = Math.floor(nowSeconds) - signedAt;
	if (age > toleranceSeconds) {
		return refuse(
			scheme,
			'stale_timestamp',
			`signed ${age} s ago, more than the ${toleranceSeconds} s tolerance (a replay?)`,
		);
	}
	if (-age > toleranceSeconds) {
		return refuse(
			scheme,
			'future_timestamp',
			`signed ${-age} s in the future, more than the ${toleranceSeconds} s tolerance (check the clocks)`,
		);
	}
	return undefined;
}
