/**
 * Reads n8n's execution_data.data, which is stored in the `flatted` format: a JSON array whose first entry is
 * the root, where every object and string lives in its own entry and is referenced by its index written as a
 * string. Numbers, booleans and null stay inline.
 */
export function parseFlatted(text: string): unknown {
	const table = JSON.parse(text) as unknown[];
	const revived = new Map<number, unknown>();
	const revive = (index: number): unknown => {
		if (revived.has(index)) return revived.get(index);
		const entry = table[index];
		if (entry === null || typeof entry !== 'object') {
			revived.set(index, entry);
			return entry;
		}
		const copy: Record<string, unknown> | unknown[] = Array.isArray(entry) ? [] : {};
		revived.set(index, copy); // before the children: cycles point back here
		for (const [name, value] of Object.entries(entry)) {
			(copy as Record<string, unknown>)[name] =
				typeof value === 'string' ? revive(Number(value)) : value;
		}
		return copy;
	};
	return revive(0);
}
