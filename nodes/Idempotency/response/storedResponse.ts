import { isJson } from '../../shared/isJson';
import { ResponseError } from '../errors';

/**
 * The answer Complete stores with a key, and a later repeat replays: a status code, the headers the
 * workflow names, and the body as the exact text sent. Pure: parameters in, the stored JSON text out.
 */
export interface StoredResponse {
	statusCode: number;
	/** Lower-case names, as n8n's Respond to Webhook node sends them; each an own property, `__proto__` too. */
	headers: Record<string, string>;
	/** The body, byte for byte as answered (a JSON body as its JSON text). */
	body: string;
}

export type ResponseBodyType = 'json' | 'text';

/** What the Complete operation reads from its parameters, before any check. */
export interface ResponseParameters {
	statusCode: unknown;
	bodyType: ResponseBodyType;
	body: unknown;
	headers: Array<{ name?: unknown; value?: unknown }>;
}

export const DEFAULT_MAX_RESPONSE_KIB = 64;
export const MAX_RESPONSE_KIB_LIMIT = 1024;

/** RFC 9110's token: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value may not break the header block (no CR, LF or NUL). */
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;

const DEFAULT_CONTENT_TYPE: Record<ResponseBodyType, string> = {
	json: 'application/json; charset=utf-8',
	text: 'text/plain; charset=utf-8',
};

/**
 * The response as it is stored: its JSON text, at most `maxBytes` long. A JSON body is kept as the text
 * given (or the JSON text of the value), so the first answer and every replay carry the same bytes; a
 * content-type matching the body type is added unless the workflow names one. Throws a message naming the
 * field and the problem.
 */
export function storedResponseText(input: ResponseParameters, maxBytes: number): string {
	const headers = headersOf(input.headers);
	if (!headers.has('content-type'))
		headers.set('content-type', DEFAULT_CONTENT_TYPE[input.bodyType]);
	const response: StoredResponse = {
		statusCode: statusCodeOf(input.statusCode),
		// fromEntries defines each name as an own property: `__proto__` is kept as a header, not a prototype.
		headers: Object.fromEntries(headers),
		body: input.bodyType === 'json' ? jsonBodyOf(input.body) : textBodyOf(input.body),
	};
	const text = JSON.stringify(response);
	const bytes = Buffer.byteLength(text, 'utf8');
	if (bytes > maxBytes) {
		throw new ResponseError(
			`the response to store is ${kib(bytes)} (its body ${kib(Buffer.byteLength(response.body, 'utf8'))}), ` +
				`over Max Response Size (${kib(maxBytes)}): store only what the caller needs (an ID, a status) or raise the limit`,
		);
	}
	return text;
}

/** A stored response as Postgres hands it back (pg parses json), or null when there is none. */
export function storedResponseOf(value: unknown): StoredResponse | null {
	if (value === null || value === undefined) return null;
	const parsed = (typeof value === 'string' ? JSON.parse(value) : value) as StoredResponse;
	return { statusCode: parsed.statusCode, headers: parsed.headers ?? {}, body: parsed.body };
}

function statusCodeOf(value: unknown): number {
	const code = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	if (typeof code !== 'number' || !Number.isInteger(code) || code < 100 || code > 599)
		throw new ResponseError(
			`Response Code must be a whole number from 100 to 599, got ${shown(value)}`,
		);
	return code;
}

/** Header names are data: a Map, so `constructor` or `__proto__` is a name like any other. */
function headersOf(entries: ResponseParameters['headers']): Map<string, string> {
	const headers = new Map<string, string>();
	for (const entry of entries) {
		const name = String(entry.name ?? '').trim();
		if (!HEADER_NAME.test(name))
			throw new ResponseError(
				`response header name ${shown(entry.name)} is not a valid header name`,
			);
		const lower = name.toLowerCase();
		if (headers.has(lower)) throw new ResponseError(`response header "${name}" is named twice`);
		const value = entry.value === undefined || entry.value === null ? '' : String(entry.value);
		if (UNSAFE_HEADER_VALUE.test(value))
			throw new ResponseError(
				`response header "${name}" holds a line break or NUL, which no header may`,
			);
		headers.set(lower, value);
	}
	return headers;
}

function jsonBodyOf(value: unknown): string {
	if (typeof value !== 'string') {
		if (value === undefined) return 'null';
		return JSON.stringify(value);
	}
	if (!isJson(value)) {
		throw new ResponseError(
			`Response Body is not valid JSON (${shown(value.slice(0, 40))}); choose Body Type Text for plain text`,
		);
	}
	return value;
}

function textBodyOf(value: unknown): string {
	if (value === undefined || value === null) return '';
	return typeof value === 'string' ? value : JSON.stringify(value);
}

function kib(bytes: number): string {
	return `${(bytes / 1024).toFixed(1)} KiB`;
}

function shown(value: unknown): string {
	return typeof value === 'string' ? `"${value}"` : String(value);
}
