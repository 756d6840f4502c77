import { readSingleHeader } from './headers';
import { decodeBase64, hmac } from './hmac';
import { signedVerdict } from './signedVerdict';
import { headerFailure, parseUnixSeconds } from './timestamp';
import {
	RAW_BODY_MISSING,
	SignatureConfigError,
	refuse,
	type SignedRequest,
	type SignatureVerdict,
	type SigningSecrets,
	type VerifyOptions,
} from './verdict';

/** Standard Webhooks names its headers `webhook-*`; Svix, which the standard grew out of, `svix-*`. */
export type StandardWebhooksFlavour = 'webhook' | 'svix';

/**
 * Standard Webhooks: HMAC-SHA256 of `{id}.{timestamp}.{raw body}` keyed with the base64-decoded secret
 * (after `whsec_`), sent as a space-separated list of `v1,<base64>` in `{prefix}-signature`. Any v1 may
 * match; other versions (v1a, asymmetric) are ignored here.
 */
export function verifyStandardWebhooks(
	request: SignedRequest,
	secrets: SigningSecrets,
	options: VerifyOptions,
	flavour: StandardWebhooksFlavour = 'webhook',
): SignatureVerdict {
	const scheme = flavour === 'svix' ? 'svix' : 'standardWebhooks';
	if (!request.rawBody) return refuse(scheme, 'no_raw_body', RAW_BODY_MISSING);
	const reads = ['id', 'timestamp', 'signature'].map((part) => readSingleHeader(request.headers, `${flavour}-${part}`));
	for (const read of reads) if (!read.ok) return headerFailure(scheme, read);
	const [id, timestamp, signatureList] = reads.map((read) => (read as { value: string }).value);

	const signatures: Buffer[] = [];
	for (const entry of signatureList.split(' ').filter((token) => token !== '')) {
		const comma = entry.indexOf(',');
		if (comma <= 0) return refuse(scheme, 'malformed_header', `header ${flavour}-signature has an entry that is not "version,signature"`);
		if (entry.slice(0, comma) !== 'v1') continue;
		const decoded = decodeBase64(entry.slice(comma + 1));
		if (!decoded) return refuse(scheme, 'malformed_header', `header ${flavour}-signature has a v1 entry that is not base64`);
		signatures.push(decoded);
	}
	if (signatures.length === 0) return refuse(scheme, 'malformed_header', `header ${flavour}-signature carries no v1 signature`);
	const parsed = parseUnixSeconds(scheme, `header ${flavour}-timestamp`, timestamp);
	if (!parsed.ok) return parsed.verdict;

	const body = request.rawBody;
	return signedVerdict(
		scheme,
		secrets,
		(secret) => hmac('sha256', standardWebhooksKey(secret), [`${id}.${timestamp}.`, body]),
		signatures,
		`no v1 signature in ${flavour}-signature matches the configured secret`,
		{ signedAt: parsed.seconds, options },
	);
}

/** The HMAC key: the base64 after `whsec_`. The message never repeats the secret. */
export function standardWebhooksKey(secret: string): Buffer {
	const key = decodeBase64(secret.trim().replace(/^whsec_/, ''));
	if (!key || key.length === 0) {
		throw new SignatureConfigError('the signing secret is not a Standard Webhooks secret ("whsec_" followed by base64)');
	}
	return key;
}
