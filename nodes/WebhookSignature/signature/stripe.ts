import { decodeHex, hmac } from './hmac';
import { readSignedParts } from './signedParts';
import { signedVerdict } from './signedVerdict';
import { parseUnixSeconds } from './timestamp';
import { malformedHeader, type SchemeVerifier } from './verdict';

const SCHEME = 'stripe';
const HEADER = 'Stripe-Signature';

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 of `{t}.{raw body}`. Any v1 may
 * match: during a secret roll Stripe sends one per active secret. Other entries (v0) are ignored.
 */
export const verifyStripe: SchemeVerifier = (request, secrets, options) => {
	const parts = readSignedParts(SCHEME, request, [HEADER]);
	if (!parts.ok) return parts.verdict;
	const [header] = parts.headers;

	const timestamps: string[] = [];
	const signatures: Buffer[] = [];
	for (const entry of header.split(',')) {
		const equals = entry.indexOf('=');
		if (equals <= 0) return malformedHeader(SCHEME, HEADER, 'has an entry that is not key=value');
		const key = entry.slice(0, equals).trim();
		const value = entry.slice(equals + 1).trim();
		if (key === 't') timestamps.push(value);
		// A v1 of the wrong shape can never match; it is skipped like Stripe's own libraries do.
		if (key === 'v1') {
			const decoded = decodeHex(value);
			if (decoded) signatures.push(decoded);
		}
	}
	if (timestamps.length !== 1)
		return malformedHeader(SCHEME, HEADER, `must carry exactly one t=, found ${timestamps.length}`);
	if (signatures.length === 0) return malformedHeader(SCHEME, HEADER, 'carries no v1= signature');
	const parsed = parseUnixSeconds(SCHEME, `${HEADER} t=`, timestamps[0]);
	if (!parsed.ok) return parsed.verdict;

	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac('sha256', secret, [`${timestamps[0]}.`, parts.body]),
		signatures,
		`no v1 signature in ${HEADER} matches the configured secret`,
		{ signedAt: parsed.seconds, options },
	);
};
