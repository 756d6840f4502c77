/**
 * A header's value from a Webhook item's headers, by name in any case: Node lowercases names, but an item
 * built by hand or by another node may not. Undefined when the header is absent.
 */
export function headerValue(headers: unknown, name: string): unknown {
	if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
	const wanted = name.trim().toLowerCase();
	const match = Object.keys(headers).find((header) => header.toLowerCase() === wanted);
	return match === undefined ? undefined : (headers as Record<string, unknown>)[match];
}
