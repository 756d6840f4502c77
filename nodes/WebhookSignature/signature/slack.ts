import { decodeHex, hmac } from './hmac';
import { readSignedParts } from './signedParts';
import { signedVerdict } from './signedVerdict';
import { parseUnixSeconds } from './timestamp';
import { malformedHeader, type SchemeVerifier } from './verdict';

const SCHEME = 'slack';
const SIGNATURE_HEADER = 'X-Slack-Signature';
const TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';

/** Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}`. */
export const verifySlack: SchemeVerifier = (request, secrets, options) => {
	const parts = readSignedParts(SCHEME, request, [SIGNATURE_HEADER, TIMESTAMP_HEADER]);
	if (!parts.ok) return parts.verdict;
	const [signature, timestamp] = parts.headers;
	const match = /^v0=([0-9a-fA-F]{64})$/.exec(signature);
	if (!match)
		return malformedHeader(SCHEME, SIGNATURE_HEADER, 'is not "v0=" followed by 64 hex digits');
	const parsed = parseUnixSeconds(SCHEME, `header ${TIMESTAMP_HEADER}`, timestamp);
	if (!parsed.ok) return parsed.verdict;

	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac('sha256', secret, [`v0:${timestamp}:`, parts.body]),
		[decodeHex(match[1])!],
		`${SIGNATURE_HEADER} does not match the configured signing secret`,
		{ signedAt: parsed.seconds, options },
	);
};
