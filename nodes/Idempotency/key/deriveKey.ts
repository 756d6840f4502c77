import { headerValue } from '../../shared/headerValue';
import { canonicalJson } from './canonicalJson';
import { parseStructuredString } from './structuredString';
import { readFieldPath } from './fieldPath';
import { KeyError } from '../errors';
import type { DerivedKey, KeyInput, KeyOrigin, KeyRule } from './keyRule';
import { scopePrefix } from './scope';
import { sha256Hex } from './sha256';

/**
 * A B-tree index entry must fit in about a third of a page (~2,700 bytes); longer ids are hashed
 * well before that so every key stays a cheap primary-key lookup.
 */
const MAX_KEY_VALUE_BYTES = 512;

/** A UTF-16 surrogate without its partner: valid in a JS string and in JSON, but not text Postgres can store. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** One stable key per event. Pure: the same input always gives the same key. */
export function deriveKey(input: KeyInput, rule: KeyRule, scope = ''): DerivedKey {
	const derived = deriveUnscopedKey(input, rule);
	if (scope === '') return derived;
	return { ...derived, key: `${scopePrefix(scope)}${derived.key}` };
}

function deriveUnscopedKey(input: KeyInput, rule: KeyRule): DerivedKey {
	switch (rule.source) {
		case 'auto':
			return keyFromEventIdOrBody(input);
		case 'header': {
			const value = rule.structuredString
				? readStructuredHeader(input.json, rule.headerName)
				: readHeader(input.json, rule.headerName);
			return prefixedIdKey('evt:', requireIdValue(value, `header "${rule.headerName}"`), 'header');
		}
		case 'field': {
			const value = readFieldPath(input.json, rule.fieldPath);
			return prefixedIdKey('evt:', requireIdValue(value, `field "${rule.fieldPath}"`), 'field');
		}
		case 'expression':
			return prefixedIdKey('', requireIdValue(rule.value, 'the key expression'), 'expression');
		case 'polled':
			return prefixedIdKey('evt:', requireIdValue(rule.value, 'Value to Dedupe On'), 'polled_item');
	}
}

/**
 * The default rule: `evt:` + body.id; without an id, `sha256:` + the hash of the exact request bytes;
 * without bytes, `sha256-json:` + the hash of the body's canonical JSON.
 */
function keyFromEventIdOrBody(input: KeyInput): DerivedKey {
	const { body, bodyLabel } = eventBody(input.json);
	if (isPlainObject(body)) {
		const id = idValueToString(body.id, `${bodyLabel}.id`);
		if (id !== undefined) return prefixedIdKey('evt:', id, 'body_id');
	}
	if (input.rawBody && input.rawBody.length > 0) {
		return {
			key: `sha256:${sha256Hex(input.rawBody)}`,
			origin: 'raw_body',
			hashedLongValue: false,
		};
	}
	if (isEmptyBody(body)) {
		// An empty delivery: no retry of it can ever succeed, so say that, not how to read bytes that are not there.
		throw new KeyError(
			`no key: the ${bodyLabel} is empty and there are no request bytes to hash; nothing identifies this delivery ` +
				'(a sender that posts empty bodies needs another Key Source, such as its delivery-id header)',
		);
	}
	return {
		key: `sha256-json:${sha256Hex(canonicalJson(body))}`,
		origin: 'canonical_json',
		hashedLongValue: false,
	};
}

/** A Webhook item (it has `body` or `headers`) carries the event in json.body; any other item is the event itself. */
export function eventBody(json: Record<string, unknown>): { body: unknown; bodyLabel: string } {
	const fromWebhook = 'body' in json || 'headers' in json;
	return fromWebhook
		? { body: json.body, bodyLabel: 'body' }
		: { body: json, bodyLabel: 'item json' };
}

/** Whether the default rule will key this item by its event id, so the raw bytes are not needed. */
export function hasEventId(json: Record<string, unknown>): boolean {
	const { body } = eventBody(json);
	return isPlainObject(body) && body.id !== '' && isIdValue(body.id);
}

/** A non-null string or a finite number (or bigint): the values an id may take. */
function isIdValue(value: unknown): value is string | number | bigint {
	return (
		typeof value === 'string' ||
		(typeof value === 'number' && Number.isFinite(value)) ||
		typeof value === 'bigint'
	);
}

/**
 * A key value a user gave (a burst key, say) as Postgres can store and index it: the value itself, or
 * `sha256-value:` and its hash when it is long, holds NUL or a lone surrogate (as for a claim key).
 */
export function storableKeyValue(value: string): string {
	return prefixedIdKey('', value, 'expression').key;
}

function prefixedIdKey(prefix: string, id: string, origin: KeyOrigin): DerivedKey {
	// Postgres text cannot hold NUL, and long values make fat index entries: both are hashed, never failed.
	// A lone surrogate would reach Postgres as U+FFFD (so "\ud800" and "\udfff" would share a key) and come
	// back changed: it is hashed from its UTF-16 code units, which keep every such id distinct.
	// A value that already reads as a hashed one is hashed too: sent as is, it would be the key of the
	// long value it names (and claim it, or join its burst).
	const hashedPrefix = prefix === '' ? 'sha256-value:' : `${prefix.slice(0, -1)}-sha256:`;
	const notText = LONE_SURROGATE.test(id);
	if (
		notText ||
		Buffer.byteLength(id, 'utf8') > MAX_KEY_VALUE_BYTES ||
		id.includes('\u0000') ||
		(prefix === '' && id.startsWith(hashedPrefix))
	) {
		return {
			key: `${hashedPrefix}${sha256Hex(notText ? Buffer.from(id, 'utf16le') : id)}`,
			origin,
			hashedLongValue: true,
		};
	}
	return { key: `${prefix}${id}`, origin, hashedLongValue: false };
}

/**
 * Strings and finite numbers are ids (1 and "1" are the same id). Absent, null and "" mean "no id".
 * Anything else (object, array, boolean) is refused: turning it into text would make unrelated events collide.
 */
export function idValueToString(value: unknown, where: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (isIdValue(value)) return String(value);
	if (typeof value === 'number')
		throw new KeyError(
			`${where} is ${value}, which is not a usable id (a finite number or a string is)`,
		);
	const kind = Array.isArray(value)
		? 'an array'
		: typeof value === 'object'
			? 'an object'
			: `a ${typeof value}`;
	throw new KeyError(`${where} is ${kind}; an id must be a string or a number`);
}

function requireIdValue(value: unknown, where: string): string {
	const id = idValueToString(value, where);
	if (id === undefined) throw new KeyError(`no key: ${where} is missing or empty`);
	return id;
}

function readHeader(json: Record<string, unknown>, name: string): unknown {
	const value = headerValue(json.headers, name);
	if (Array.isArray(value)) {
		throw new KeyError(
			`header "${name}" was sent ${value.length} times; expected exactly one value`,
		);
	}
	// Node's HTTP server joins a header sent twice into one value, "a, b": n8n hands the node that text. No
	// provider's delivery id holds ", ", so such a value is a repeated (or forged) header, not an id.
	if (typeof value === 'string' && value.includes(', ')) {
		throw new KeyError(
			`header "${name}" holds "${value}": it was sent more than once (Node joins repeats with ", "); expected exactly one value`,
		);
	}
	return value;
}

/**
 * A header whose value may be a Structured Field String: a quoted value is keyed by the string it spells
 * (so `"abc"` and `abc` are one key; parameters after it, `"abc";client=42`, are checked and ignored), and
 * must be exactly one valid string; an unquoted one is read as any header is (the common form:
 * Stripe-style clients send the bare value).
 */
function readStructuredHeader(json: Record<string, unknown>, name: string): unknown {
	const value = headerValue(json.headers, name);
	if (typeof value !== 'string' || !value.startsWith('"')) return readHeader(json, name);
	const spelled = parseStructuredString(value);
	if (spelled === undefined) {
		throw new KeyError(
			`header "${name}" holds ${value.length > 60 ? `${value.slice(0, 60)}…` : value}, which is not one Structured Field string ` +
				'("…" with only \\" and \\\\ escaped, then any ;parameters; a header sent twice is refused)',
		);
	}
	return spelled;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isEmptyBody(body: unknown): boolean {
	if (body === undefined || body === null || body === '') return true;
	if (Array.isArray(body)) return body.length === 0;
	return isPlainObject(body) && Object.keys(body).length === 0;
}
