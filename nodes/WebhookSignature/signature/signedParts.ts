import { readSingleHeader, type HeaderRead } from './headers';
import { RAW_BODY_MISSING, refuse, type SignedRequest, type SignatureVerdict } from './verdict';

export type SignedParts =
	{ ok: true; body: Uint8Array; headers: string[] } | { ok: false; verdict: SignatureVerdict };

/** The raw body and the named headers (one value each), or the verdict that refuses a delivery lacking one. */
export function readSignedParts(
	scheme: string,
	request: SignedRequest,
	headerNames: string[],
): SignedParts {
	if (!request.rawBody)
		return { ok: false, verdict: refuse(scheme, 'no_raw_body', RAW_BODY_MISSING) };
	const headers: string[] = [];
	for (const name of headerNames) {
		const read = readSingleHeader(request.headers, name);
		if (!read.ok) return { ok: false, verdict: headerFailure(scheme, read) };
		headers.push(read.value);
	}
	return { ok: true, body: request.rawBody, headers };
}

export function headerFailure(
	scheme: string,
	read: Extract<HeaderRead, { ok: false }>,
): SignatureVerdict {
	return refuse(scheme, read.reason, read.message);
}
