import { ed25519PublicKey, ed25519VerifiesAny, isStandardWebhooksPublicKey } from './ed25519';
import { decodeBase64, hmac, matchesAny } from './hmac';
import { readSignedParts } from './signedParts';
import { verifiedVerdict } from './signedVerdict';
import { parseUnixSeconds } from './timestamp';
import { SignatureConfigError, malformedHeader, type SchemeVerifier } from './verdict';

/** Standard Webhooks names its headers `webhook-*`; Svix, which the standard grew out of, `svix-*`. */
export type StandardWebhooksFlavour = 'webhook' | 'svix';

/**
 * Standard Webhooks: HMAC-SHA256 of `{id}.{timestamp}.{raw body}` keyed with the base64-decoded secret
 * (after `whsec_`), sent as a space-separated list of `v1,<base64>` in `{prefix}-signature`. With a
 * `whpk_` public key instead of a secret, the `v1a,<base64>` entries are checked as Ed25519 signatures of
 * the same content. Any entry may match; other versions are ignored.
 */
export function standardWebhooksVerifier(flavour: StandardWebhooksFlavour): SchemeVerifier {
	const scheme = flavour === 'svix' ? 'svix' : 'standardWebhooks';
	const headerNames = [`${flavour}-id`, `${flavour}-timestamp`, `${flavour}-signature`];
	const signatureHeader = `${flavour}-signature`;
	return (request, secrets, options) => {
		const parts = readSignedParts(scheme, request, headerNames);
		if (!parts.ok) return parts.verdict;
		const [id, timestamp, signatureList] = parts.headers;

		const signatures: Record<'v1' | 'v1a', Buffer[]> = { v1: [], v1a: [] };
		for (const entry of signatureList.split(' ').filter((token) => token !== '')) {
			const comma = entry.indexOf(',');
			if (comma <= 0)
				return malformedHeader(
					scheme,
					signatureHeader,
					'has an entry that is not "version,signature"',
				);
			const version = entry.slice(0, comma);
			if (version !== 'v1' && version !== 'v1a') continue;
			const decoded = decodeBase64(entry.slice(comma + 1));
			if (!decoded)
				return malformedHeader(
					scheme,
					signatureHeader,
					`has a ${version} entry that is not base64`,
				);
			signatures[version].push(decoded);
		}
		if (signatures.v1.length + signatures.v1a.length === 0)
			return malformedHeader(scheme, signatureHeader, 'carries no v1 or v1a signature');
		const parsed = parseUnixSeconds(scheme, `header ${flavour}-timestamp`, timestamp);
		if (!parsed.ok) return parsed.verdict;

		const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), parts.body]);
		return verifiedVerdict(
			scheme,
			secrets,
			(secret) =>
				isStandardWebhooksPublicKey(secret)
					? ed25519VerifiesAny(ed25519PublicKey(secret), content, signatures.v1a)
					: matchesAny(hmac('sha256', standardWebhooksKey(secret), [content]), signatures.v1),
			`no signature in ${flavour}-signature matches the configured secret or public key`,
			{ signedAt: parsed.seconds, options },
		);
	};
}

/** The HMAC key: the base64 after `whsec_`. The message never repeats the secret. */
function standardWebhooksKey(secret: string): Buffer {
	const key = decodeBase64(secret.trim().replace(/^whsec_/, ''));
	if (!key || key.length === 0) {
		throw new SignatureConfigError(
			'the signing secret is not a Standard Webhooks secret ("whsec_" followed by base64)',
		);
	}
	return key;
}
