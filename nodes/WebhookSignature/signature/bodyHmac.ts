import { hmac } from './hmac';
import { readSignedParts } from './signedParts';
import { signedVerdict } from './signedVerdict';
import { malformedHeader, type SchemeVerifier } from './verdict';

/** A sender that puts the HMAC-SHA256 of the raw body, and nothing else, in one header. */
export interface BodyHmacScheme {
	scheme: string;
	header: string;
	/** The digest the header carries, or undefined when the header is not in the sender's format. */
	readDigest(header: string): Uint8Array | undefined;
	/** What the header should look like, for the malformed-header message. */
	format: string;
}

/** GitHub and Shopify: one header, the body's HMAC-SHA256, no timestamp signed. */
export function bodyHmacVerifier(sender: BodyHmacScheme): SchemeVerifier {
	return (request, secrets) => {
		const parts = readSignedParts(sender.scheme, request, [sender.header]);
		if (!parts.ok) return parts.verdict;
		const digest = sender.readDigest(parts.headers[0]);
		if (!digest) {
			return malformedHeader(sender.scheme, sender.header, `is not ${sender.format}`);
		}
		return signedVerdict(
			sender.scheme,
			secrets,
			(secret) => hmac('sha256', secret, [parts.body]),
			[digest],
			`${sender.header} does not match the body signed with the configured secret`,
		);
	};
}
