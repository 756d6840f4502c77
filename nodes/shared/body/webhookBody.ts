import { parse as parseForm } from 'node:querystring';

import { bodyFormat, isUtf8, parseContentType } from './contentType';
import type { SignedBody } from './signedBody';

/**
 * `json.body` as n8n's webhook server gave it to the first run, rebuilt from the kept bytes: JSON as
 * JSON.parse reads it (a key named twice keeps its last value), a form as Node's querystring reads it
 * (at most 1,000 fields), an empty body as `{}`. Unlike readSignedBody nothing is refused for being
 * ambiguous: the first run already read it one way, and the rerun must read it the same way. What n8n
 * read otherwise (XML, another charset, multipart) cannot be rebuilt: the caller must say so, never hand
 * the business step an empty body.
 */
export function readWebhookBody(
	rawBody: Uint8Array,
	contentTypeHeader: string | undefined,
): SignedBody {
	if (rawBody.length === 0) return { ok: true, body: {} };
	const contentType =
		contentTypeHeader === undefined ? undefined : parseContentType(contentTypeHeader);
	const format = contentType && bodyFormat(contentType);
	if (!contentType || !format || !isUtf8(contentType)) {
		return {
			ok: false,
			problem:
				`its item cannot be rebuilt as the Webhook node gave it: Content-Type ${contentTypeHeader ?? '(none)'} is not ` +
				"JSON or a form in UTF-8 (the raw bytes are kept; turn off the Webhook node's Raw Body to keep such events as JSON)",
		};
	}
	const text = new TextDecoder('utf-8').decode(rawBody);
	if (format === 'form') return { ok: true, body: parseForm(text) };
	try {
		return { ok: true, body: JSON.parse(text) };
	} catch (error) {
		return {
			ok: false,
			problem: `its body is not valid JSON (${(error as Error).message}), so its item cannot be rebuilt`,
		};
	}
}
