import { matchesAny } from './hmac';
import { candidateSecrets } from './secrets';
import { checkFreshness } from './timestamp';
import { refuse, type SignatureVerdict, type SigningSecrets, type VerifyOptions } from './verdict';

/**
 * The end every scheme shares: each secret's expected MAC against the signatures sent (constant time),
 * then, for schemes that sign a timestamp, its freshness. The signature comes first, so a stale verdict
 * means a genuine but old request (a replay), not a forgery.
 */
export function signedVerdict(
	scheme: string,
	secrets: SigningSecrets,
	expectedMac: (secret: string) => Uint8Array,
	sent: Uint8Array[],
	mismatchMessage: string,
	freshness?: { signedAt: number; options: VerifyOptions },
): SignatureVerdict {
	return verifiedVerdict(
		scheme,
		secrets,
		(secret) => matchesAny(expectedMac(secret), sent),
		mismatchMessage,
		freshness,
	);
}

/** The same for any check of one secret (an asymmetric signature has no expected value to compare with). */
export function verifiedVerdict(
	scheme: string,
	secrets: SigningSecrets,
	verifies: (secret: string) => boolean,
	mismatchMessage: string,
	freshness?: { signedAt: number; options: VerifyOptions },
): SignatureVerdict {
	const used = candidateSecrets(secrets).find(({ secret }) => verifies(secret))?.used;
	if (!used) return refuse(scheme, 'signature_mismatch', mismatchMessage);
	if (!freshness) return { valid: true, scheme, secretUsed: used, timestamp: null };
	const { signedAt, options } = freshness;
	const refusal = checkFreshness(scheme, signedAt, options.nowSeconds, options.toleranceSeconds);
	return refusal ?? { valid: true, scheme, secretUsed: used, timestamp: signedAt };
}
