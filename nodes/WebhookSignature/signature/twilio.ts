import { createHash } from 'node:crypto';
import { parse as parseForm } from 'node:querystring';

import { decodeBase64, decodeHex, hmac, matchesAny } from './hmac';
import { readSignedParts } from './signedParts';
import { verifiedVerdict } from './signedVerdict';
import {
	SignatureConfigError,
	malformedHeader,
	refuse,
	type SchemeVerifier,
	type SignatureVerdict,
	type VerifyOptions,
} from './verdict';

const SCHEME = 'twilio';
const HEADER = 'X-Twilio-Signature';
const BODY_HASH_PARAM = 'bodySHA256';

/**
 * Twilio: `X-Twilio-Signature`, base64 HMAC-SHA1 (auth token as key) of the public URL followed by every
 * form parameter of the body, sorted by name, as name+value. For JSON bodies Twilio adds
 * `bodySHA256=<hex>` to the query instead: the URL alone is signed, and that hash must match the bytes.
 * The public URL is a setting because n8n behind a proxy does not know the URL Twilio called.
 */
export const verifyTwilio: SchemeVerifier<VerifyOptions & { publicUrl?: string }> = (
	request,
	secrets,
	settings,
) => {
	const publicUrl = settings.publicUrl ?? '';
	if (!/^https?:\/\/\S+$/.test(publicUrl.trim())) {
		throw new SignatureConfigError(
			'Twilio needs the public URL configured in Twilio (https://…), exactly as Twilio calls it',
		);
	}
	const parts = readSignedParts(SCHEME, request, [HEADER]);
	if (!parts.ok) return parts.verdict;
	const body = parts.body;
	const given = decodeBase64(parts.headers[0]);
	if (!given || given.length !== 20)
		return malformedHeader(SCHEME, HEADER, 'is not a base64 SHA-1 digest');

	const bodyHash = request.query?.[BODY_HASH_PARAM];
	const contents: string[] = [];
	for (const url of withAndWithoutPort(publicUrl.trim())) {
		const content =
			bodyHash === undefined ? formContent(url, body) : bodyHashContent(url, bodyHash);
		if (typeof content !== 'string') return content;
		contents.push(content);
	}
	const verdict = verifiedVerdict(
		SCHEME,
		secrets,
		(secret) => contents.some((content) => matchesAny(hmac('sha1', secret, [content]), [given])),
		`${HEADER} does not match the URL and parameters signed with the auth token`,
	);
	if (verdict.valid && bodyHash !== undefined) {
		// The URL (with its bodySHA256) is authentic; the bytes must be the ones it names.
		const actual = createHash('sha256').update(body).digest();
		if (!matchesAny(actual, [decodeHex(String(bodyHash))!])) {
			return refuse(
				SCHEME,
				'signature_mismatch',
				`the body does not match the signed ${BODY_HASH_PARAM}`,
			);
		}
	}
	return verdict;
};

/**
 * The configured URL, and the same URL with its port removed and with the scheme's default port added:
 * Twilio has signed either form of one URL, and its own libraries accept both. Every variant is of the
 * configured URL, never of anything the request says.
 */
function withAndWithoutPort(url: string): string[] {
	const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
	if (!match) return [url];
	const [, scheme, authority, rest] = match;
	const hostStart = authority.lastIndexOf('@') + 1;
	const hostAndPort = authority.slice(hostStart);
	// In an IPv6 literal the port's colon comes after the closing bracket.
	const colon = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
	const withoutPort =
		scheme +
		authority.slice(0, hostStart) +
		(colon < 0 ? hostAndPort : hostAndPort.slice(0, colon)) +
		rest;
	const defaultPort = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
	const withPort = colon < 0 ? scheme + authority + defaultPort + rest : url;
	return [...new Set([url, withoutPort, withPort])];
}

/** URL + each form parameter as name+value, sorted by name (a repeated name's distinct values sorted too, as Twilio's libraries do). */
function formContent(url: string, rawBody: Uint8Array): string {
	// Parsed as n8n parses the form it hands on, so the parameters checked are the ones the next node reads.
	const params = parseForm(Buffer.from(rawBody).toString('utf8'), '&', '=', { maxKeys: 0 });
	const values = (name: string) => [params[name] ?? []].flat();
	return (
		url +
		Object.keys(params)
			.sort()
			.map((name) =>
				[...new Set(values(name))]
					.sort()
					.map((value) => name + value)
					.join(''),
			)
			.join('')
	);
}

/** The URL Twilio called for a JSON body: the configured one with `bodySHA256=<hex>` appended to its query. */
function bodyHashContent(url: string, bodyHash: unknown): string | SignatureVerdict {
	if (typeof bodyHash !== 'string' || !decodeHex(bodyHash) || bodyHash.length !== 64) {
		return refuse(
			SCHEME,
			'malformed_header',
			`query parameter ${BODY_HASH_PARAM} is not a hex SHA-256 digest`,
		);
	}
	if (url.includes(`${BODY_HASH_PARAM}=`)) return url;
	return `${url}${url.includes('?') ? '&' : '?'}${BODY_HASH_PARAM}=${bodyHash}`;
}
