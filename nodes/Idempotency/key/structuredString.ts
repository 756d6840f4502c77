/**
 * The Idempotency-Key header's value as RFC 8941 reads it (section 4.2, "Parsing Structured Fields", as
 * an Item): spaces around it, a String (`"…"`, with `\"` and `\\` as its only escapes, printable ASCII
 * inside), then any parameters (`"k";client=42`). Returns the string it spells, or undefined when the text
 * is not exactly one such Item: a list (the `"a", "b"` of a header sent twice), another kind of item (a
 * token, a number) or anything malformed. The draft asks only for a String, so parameters are read to
 * check their form and then ignored: they are not part of the key.
 */
export function parseStructuredString(text: string): string | undefined {
	STRING.lastIndex = skipSpaces(text, 0);
	const string = STRING.exec(text);
	if (string === null) return undefined;
	const end = parametersEnd(text, STRING.lastIndex);
	if (end === undefined || skipSpaces(text, end) !== text.length) return undefined;
	return string[1].replace(/\\(["\\])/g, '$1');
}

// Sticky patterns, each matching exactly one RFC 8941 form where lastIndex points.
const STRING = /"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"/y;
const KEY = /[a-z*][a-z0-9_.*-]*/y;
/**
 * A parameter's value (a bare item): an Integer (at most 15 digits), a Decimal (at most 12 digits, a dot
 * and 1 to 3 more), a String, a Token, a Byte Sequence, a Boolean; and the two that RFC 9651 (which
 * replaced RFC 8941) adds, a Date (`@` and an Integer) and a Display String (`%"…"`, percent-encoded
 * UTF-8), so a client on the newer RFC is not refused over a parameter the key ignores.
 */
const BARE_ITEM = new RegExp(
	[
		/-?(?:\d{1,12}\.\d{1,3}(?!\d)|\d{1,15}(?![\d.]))/.source,
		STRING.source,
		/[A-Za-z*][!#$%&'*+.^_`|~0-9A-Za-z:/-]*/.source,
		// Base64 that decodes: whole quads, then 2 or 3 letters, their "=" padding optional.
		/:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?:/.source,
		/\?[01]/.source,
		/@-?\d{1,15}(?![\d.])/.source,
		/%"(?<display>(?:[\x20\x21\x23\x24\x26-\x7e]|%[0-9a-f]{2})*)"/.source,
	].join('|'),
	'y',
);

/** Where `*( ";" *SP key [ "=" bare-item ] )` ends, or undefined when a parameter is malformed. */
function parametersEnd(text: string, at: number): number | undefined {
	while (text[at] === ';') {
		KEY.lastIndex = skipSpaces(text, at + 1);
		if (KEY.exec(text) === null) return undefined;
		at = KEY.lastIndex;
		if (text[at] !== '=') continue;
		BARE_ITEM.lastIndex = at + 1;
		const item = BARE_ITEM.exec(text);
		if (item === null) return undefined;
		const display = item.groups?.display;
		if (display !== undefined && !isPercentEncodedUtf8(display)) return undefined;
		at = BARE_ITEM.lastIndex;
	}
	return at;
}

/** A Display String's bytes must be UTF-8 (RFC 9651 section 4.2.10); decodeURIComponent refuses any other. */
function isPercentEncodedUtf8(text: string): boolean {
	try {
		decodeURIComponent(text);
		return true;
	} catch {
		return false;
	}
}

/** RFC 8941 trims only SP (not tabs) around a field value. */
function skipSpaces(text: string, at: number): number {
	while (text[at] === ' ') at++;
	return at;
}
