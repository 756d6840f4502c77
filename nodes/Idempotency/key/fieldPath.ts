/** Splits `body.data[0].id` into ['body', 'data', '0', 'id']. */
function parseFieldPath(path: string): string[] {
	const parts = path
		.trim()
		.replace(/\[(\d+)\]/g, '.$1')
		.split('.')
		.filter((part) => part !== '');
	return parts;
}

export function readFieldPath(root: unknown, path: string): unknown {
	let current: unknown = root;
	for (const part of parseFieldPath(path)) {
		if (current === null || typeof current !== 'object') return undefined;
		current = (current as Record<string, unknown>)[part];
	}
	return current;
}
