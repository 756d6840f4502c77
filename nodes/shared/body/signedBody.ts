import { parse as parseForm } from 'node:querystring';

import { bodyFormat, isUtf8, parseContentType } from './contentType';
import { isJson } from '../isJson';
import { repeatedJsonKey } from './repeatedJsonKey';

/** What the next node may read as `json.body`: the parse of the signed bytes, or why there is none. */
export type SignedBody = { ok: true; body: unknown } | { ok: false; problem: string };

const JSON_AND_FORM =
	'JSON (application/json, …+json) or a form (application/x-www-form-urlencoded)';

/**
 * `json.body` rebuilt from the verified bytes alone, parsed as n8n's webhook server parses them, so nothing
 * outside the signature (another form field, a file, a header) can reach the next node as the body. Each byte
 * sequence has at most one reading: a form that is valid JSON is refused (a JSON delivery relabelled as a form
 * would otherwise be claimed under another key), and JSON is JSON only under a JSON Content-Type.
 */
export function readSignedBody(rawBody: Uint8Array, contentTypeHeader: unknown): SignedBody {
	if (contentTypeHeader !== undefined && typeof contentTypeHeader !== 'string')
		return refused('the Content-Type header was sent more than once');
	const contentType =
		contentTypeHeader === undefined ? undefined : parseContentType(contentTypeHeader);
	if (contentType?.type.startsWith('multipart/')) {
		return refused(
			`Content-Type ${contentType.type}: n8n splits such a request into form fields (json.body) and files ` +
				'(binary properties), and the signature covers neither as n8n hands them on. Providers sign a raw ' +
				`${JSON_AND_FORM} body; a multipart request carrying one is a replay or a misconfigured sender`,
		);
	}
	if (rawBody.length === 0) return { ok: true, body: {} };
	if (!contentType)
		return refused(`no Content-Type header: the sender must say the body is ${JSON_AND_FORM}`);
	const format = bodyFormat(contentType);
	if (!format) {
		return refused(
			`Content-Type ${contentType.type}: the node passes on only ${JSON_AND_FORM}, which it reads back ` +
				'from the signed bytes exactly as n8n does; have the sender post one of those',
		);
	}
	if (!isUtf8(contentType)) {
		return refused(
			`Content-Type ${contentType.type} names charset ${contentType.charset}: signed bodies are read as ` +
				'UTF-8 (what every provider sends), so the same bytes cannot be read as other text; send charset=utf-8 or none',
		);
	}
	const text = decodeUtf8(rawBody);
	if (text === undefined) return refused('the body is not valid UTF-8');
	return format === 'json' ? jsonBody(text, contentType.type) : formBody(text);
}

function jsonBody(text: string, type: string): SignedBody {
	let body: unknown;
	try {
		body = JSON.parse(text);
	} catch (error) {
		return refused(
			`Content-Type ${type}, but the body is not valid JSON (${(error as Error).message})`,
		);
	}
	const repeated = repeatedJsonKey(text);
	if (repeated !== undefined) {
		return refused(
			`the JSON body names ${repeated} twice in one object: JSON readers disagree on which value counts`,
		);
	}
	return { ok: true, body };
}

/**
 * As n8n: Node's querystring (not the extended `qs` syntax), a field named twice as an array of its values,
 * which a key derived from that field refuses. Percent-escapes must spell UTF-8: n8n would read `%FF` and
 * `%FE` alike as U+FFFD, so two events would share one key.
 */
function formBody(text: string): SignedBody {
	if (isJson(text)) {
		return refused(
			'Content-Type application/x-www-form-urlencoded, but the body is JSON: read as a form it would be one ' +
				'field named after the whole body; send it as application/json',
		);
	}
	let undecodable: string | undefined;
	const decode = (part: string) => {
		try {
			return decodeURIComponent(part);
		} catch {
			undecodable ??= part;
			return part;
		}
	};
	// n8n stops at 1,000 fields; every signed field is kept here.
	const fields = parseForm(text, '&', '=', { maxKeys: 0, decodeURIComponent: decode });
	if (undecodable !== undefined) {
		const shown = undecodable.length > 60 ? `${undecodable.slice(0, 60)}…` : undecodable;
		return refused(
			`the form holds "${shown}", whose percent-escapes do not spell UTF-8 text: n8n would read it with ` +
				'replacement characters, so different bytes would read as the same value',
		);
	}
	return { ok: true, body: fields };
}

/** UTF-8 without replacement characters (two different byte strings must never read as the same text); one BOM is dropped, as n8n does. */
function decodeUtf8(bytes: Uint8Array): string | undefined {
	try {
		return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
	} catch {
		return undefined;
	}
}

function refused(problem: string): SignedBody {
	return { ok: false, problem };
}
