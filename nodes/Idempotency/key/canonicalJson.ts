/**
 * JSON with object keys sorted at every depth and no insignificant whitespace, so two deliveries of
 * the same payload hash alike whatever key order or spacing the sender used.
 */
export function canonicalJson(value: unknown): string {
	if (value === null || typeof value !== 'object') {
		// undefined, functions and symbols have no JSON form; they only occur inside objects (skipped below).
		return JSON.stringify(value) ?? 'null';
	}
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value instanceof Date) return JSON.stringify(value);
	const entries = Object.keys(value)
		.filter((k) => (value as Record<string, unknown>)[k] !== undefined)
		.sort()
		.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
	return `{${entries.join(',')}}`;
}
