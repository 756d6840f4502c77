/**
 * An RFC 8941 Structured Field String (`"…"`, with `\"` and `\\` as its only escapes, printable ASCII
 * inside): the form the Idempotency-Key header draft gives its value. Returns the string it spells, or
 * undefined when the text is not exactly one such string (anything after the closing quote, such as the
 * `, "…"` of a header sent twice, makes it not one).
 */
export function parseStructuredString(text: string): string | undefined {
	if (text.length < 2 || text[0] !== '"') return undefined;
	let value = '';
	for (let i = 1; i < text.length; i++) {
		const char = text[i];
		if (char === '"') return i === text.length - 1 ? value : undefined;
		if (char === '\\') {
			const next = text[++i];
			if (next !== '"' && next !== '\\') return undefined;
			value += next;
			continue;
		}
		const code = char.charCodeAt(0);
		if (code < 0x20 || code > 0x7e) return undefined;
		value += char;
	}
	return undefined;
}
