import { readSingleHeader } from './headers';
import { decodeBase64, decodeHex, hmac, type HmacAlgorithm } from './hmac';
import { signedVerdict } from './signedVerdict';
import { headerFailure, readSignedParts } from './signedParts';
import { parseUnixSeconds } from './timestamp';
import {
	SignatureConfigError,
	malformedHeader,
	refuse,
	type SchemeVerifier,
	type VerifyOptions,
} from './verdict';

const SCHEME = 'genericHmac';

export interface GenericHmacSettings {
	signatureHeader: string;
	algorithm: HmacAlgorithm;
	encoding: 'hex' | 'base64';
	/** Text before the digest in the header, e.g. `sha256=`; empty for none. */
	prefix: string;
	/** Header holding a signed Unix timestamp (seconds); empty when the sender signs none. */
	timestampHeader: string;
	/** What is signed: literal text with `{body}`, `{timestamp}` and `{header:Name}` placeholders. */
	signedContent: string;
}

type TemplatePart = { literal: string } | { body: true } | { timestamp: true } | { header: string };

/** Any sender that signs with an HMAC the schemes above do not name. */
export const verifyGenericHmac: SchemeVerifier<
	VerifyOptions & { generic?: GenericHmacSettings }
> = (request, secrets, options) => {
	const settings = options.generic;
	if (!settings)
		return refuse(SCHEME, 'unknown_scheme', 'the generic HMAC scheme needs its settings');
	const template = parseSignedContent(settings);
	const signed = readSignedParts(SCHEME, request, [settings.signatureHeader]);
	if (!signed.ok) return signed.verdict;
	const [header] = signed.headers;
	if (!header.startsWith(settings.prefix))
		return malformedHeader(
			SCHEME,
			settings.signatureHeader,
			`does not start with "${settings.prefix}"`,
		);
	const digestText = header.slice(settings.prefix.length);
	const given = settings.encoding === 'hex' ? decodeHex(digestText) : decodeBase64(digestText);
	if (!given)
		return malformedHeader(
			SCHEME,
			settings.signatureHeader,
			`is not ${settings.encoding} after its prefix`,
		);

	let signedAt: number | null = null;
	let timestampText = '';
	if (settings.timestampHeader !== '') {
		const timestamp = readSingleHeader(request.headers, settings.timestampHeader);
		if (!timestamp.ok) return headerFailure(SCHEME, timestamp);
		const parsed = parseUnixSeconds(SCHEME, `header ${settings.timestampHeader}`, timestamp.value);
		if (!parsed.ok) return parsed.verdict;
		signedAt = parsed.seconds;
		timestampText = timestamp.value;
	}
	const parts: Array<string | Uint8Array> = [];
	for (const part of template) {
		if ('literal' in part) parts.push(part.literal);
		else if ('body' in part) parts.push(signed.body);
		else if ('timestamp' in part) parts.push(timestampText);
		else {
			const read = readSingleHeader(request.headers, part.header);
			if (!read.ok) return headerFailure(SCHEME, read);
			parts.push(read.value);
		}
	}
	return signedVerdict(
		SCHEME,
		secrets,
		(secret) => hmac(settings.algorithm, secret, parts),
		[given],
		`${settings.signatureHeader} does not match the configured secret`,
		signedAt === null ? undefined : { signedAt, options },
	);
};

const PLACEHOLDER = /\{(body|timestamp|header:[^{}]+)\}/g;

/** `{timestamp}.{body}` → parts; refuses what would sign something other than the user meant. */
function parseSignedContent(settings: GenericHmacSettings): TemplatePart[] {
	const text = settings.signedContent;
	const parts: TemplatePart[] = [];
	let last = 0;
	for (const match of text.matchAll(PLACEHOLDER)) {
		if (match.index! > last) parts.push({ literal: text.slice(last, match.index) });
		const name = match[1];
		if (name === 'body') parts.push({ body: true });
		else if (name === 'timestamp') parts.push({ timestamp: true });
		else parts.push({ header: name.slice('header:'.length).trim() });
		last = match.index! + match[0].length;
	}
	if (last < text.length) parts.push({ literal: text.slice(last) });
	if (parts.some((part) => 'literal' in part && /[{}]/.test(part.literal))) {
		throw new SignatureConfigError(
			`Signed Content "${text}" has an unknown placeholder; use {body}, {timestamp} or {header:Name}`,
		);
	}
	if (!parts.some((part) => 'body' in part)) {
		throw new SignatureConfigError(
			`Signed Content "${text}" must contain {body}: a signature that does not cover the body proves nothing about it`,
		);
	}
	if (parts.some((part) => 'timestamp' in part) && settings.timestampHeader === '') {
		throw new SignatureConfigError(
			'Signed Content uses {timestamp}, but no Timestamp Header is set',
		);
	}
	if (settings.signatureHeader.trim() === '')
		throw new SignatureConfigError('Signature Header is empty');
	return parts;
}
