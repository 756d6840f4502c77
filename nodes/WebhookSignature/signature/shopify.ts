import { decodeBase64, hmac } from './hmac';
import { readSignedParts } from './signedParts';
import { signedVerdict } from './signedVerdict';
import { refuse, type SignedRequest, type SignatureVerdict, type SigningSecrets } from './verdict';

const SCHEME = 'shopify';
const HEADER = 'X-Shopify-Hmac-Sha256';

/**
 * Shopify: `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body with the app's client secret.
 * No timestamp is signed; X-Shopify-Event-Id identifies the event for the claim.
 */
export function verifyShopify(request: SignedRequest, secrets: SigningSecrets): SignatureVerdict {
	const parts = readSignedParts(SCHEME, request, [HEADER]);
	if (!parts.ok) return parts.verdict;
	const {
		body,
		headers: [header],
	} = parts;
	const given = decodeBase64(header);
	if (!given || given.length !== 32) {
		return refuse(SCHEME, 'malformed_header', `header ${HEADER} is not a base64 SHA-256 digest`);
	}
	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac('sha256', secret, [body]),
		[given],
		`${HEADER} does not match the body signed with the configured secret`,
	);
}
