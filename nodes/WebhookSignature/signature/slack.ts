import { readSingleHeader } from './headers';
import { decodeHex, hmac } from './hmac';
import { signedVerdict } from './signedVerdict';
import { headerFailure, parseUnixSeconds } from './timestamp';
import {
	RAW_BODY_MISSING,
	refuse,
	type SignedRequest,
	type SignatureVerdict,
	type SigningSecrets,
	type VerifyOptions,
} from './verdict';

const SCHEME = 'slack';
const SIGNATURE_HEADER = 'X-Slack-Signature';
const TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';

/** Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}`. */
export function verifySlack(request: SignedRequest, secrets: SigningSecrets, options: VerifyOptions): SignatureVerdict {
	if (!request.rawBody) return refuse(SCHEME, 'no_raw_body', RAW_BODY_MISSING);
	const signature = readSingleHeader(request.headers, SIGNATURE_HEADER);
	if (!signature.ok) return headerFailure(SCHEME, signature);
	const timestamp = readSingleHeader(request.headers, TIMESTAMP_HEADER);
	if (!timestamp.ok) return headerFailure(SCHEME, timestamp);
	const match = /^v0=([0-9a-fA-F]{64})$/.exec(signature.value);
	if (!match) return refuse(SCHEME, 'malformed_header', `header ${SIGNATURE_HEADER} is not "v0=" followed by 64 hex digits`);
	const parsed = parseUnixSeconds(SCHEME, `header ${TIMESTAMP_HEADER}`, timestamp.value);
	if (!parsed.ok) return parsed.verdict;

	const body = request.rawBody;
	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac('sha256', secret, [`v0:${timestamp.value}:`, body]),
		[decodeHex(match[1])!],
		`${SIGNATURE_HEADER} does not match the configured signing secret`,
		{ signedAt: parsed.seconds, options },
	);
}
