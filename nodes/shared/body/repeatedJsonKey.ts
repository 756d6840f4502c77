interface Frame {
	/** Names seen so far in an object; null for an array. */
	names: Set<string> | null;
	path: string;
	/** In an object: whether the next string is a name. */
	expectsName: boolean;
	/** In an object: the last name; in an array: the index of the current element. */
	name: string;
	index: number;
}

/**
 * Where a valid JSON text names one key twice in one object (`body.data.id`), or undefined. JSON.parse keeps
 * the last value silently while other readers keep the first, so such a body has no single meaning. Names are
 * compared decoded: `"id"` and `"\u0069d"` are the same key.
 */
export function repeatedJsonKey(text: string, root = 'body'): string | undefined {
	const stack: Frame[] = [];
	for (let at = 0; at < text.length; at++) {
		const char = text[at];
		const top = stack[stack.length - 1];
		if (char === '"') {
			const end = stringEnd(text, at);
			if (top?.names && top.expectsName) {
				const name = JSON.parse(text.slice(at, end + 1)) as string;
				if (top.names.has(name)) return `${top.path}.${name}`;
				top.names.add(name);
				top.name = name;
				top.expectsName = false;
			}
			at = end;
		} else if (char === '{' || char === '[') {
			const path = !top
				? root
				: top.names
					? `${top.path}.${top.name}`
					: `${top.path}[${top.index}]`;
			stack.push({
				names: char === '{' ? new Set() : null,
				path,
				expectsName: true,
				name: '',
				index: 0,
			});
		} else if (char === '}' || char === ']') {
			stack.pop();
		} else if (char === ',' && top) {
			if (top.names) top.expectsName = true;
			else top.index++;
		}
	}
	return undefined;
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
	for (let at = start + 1; at < text.length; at++) {
		if (text[at] === '\\') at++;
		else if (text[at] === '"') return at;
	}
	return text.length - 1;
}
