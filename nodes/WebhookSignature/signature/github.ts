import { decodeHex, hmac } from './hmac';
import { readSignedParts } from './signedParts';
import { signedVerdict } from './signedVerdict';
import { refuse, type SignedRequest, type SignatureVerdict, type SigningSecrets } from './verdict';

const SCHEME = 'github';
const HEADER = 'X-Hub-Signature-256';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body. GitHub signs no timestamp,
 * so a replay is only stopped by the claim (X-GitHub-Delivery stays the same on every redelivery).
 */
export function verifyGitHub(request: SignedRequest, secrets: SigningSecrets): SignatureVerdict {
	const parts = readSignedParts(SCHEME, request, [HEADER]);
	if (!parts.ok) return parts.verdict;
	const {
		body,
		headers: [header],
	} = parts;
	const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header);
	if (!match)
		return refuse(
			SCHEME,
			'malformed_header',
			`header ${HEADER} is not "sha256=" followed by 64 hex digits`,
		);
	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac('sha256', secret, [body]),
		[decodeHex(match[1])!],
		`${HEADER} does not match the body signed with the configured secret`,
	);
}
