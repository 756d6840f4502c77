/**
 * The named outputs of a node's operations (Burst's Collect, Step's Start Step, Limit's Take Slot and Check
 * Rate); an operation not listed has one output. The first output is where the work runs; the last holds
 * items back from it.
 */
export type OutputsByOperation = Record<string, string[]>;

/** The node description's `outputs`: an expression on the operation, so the editor draws each one's. */
export function outputsExpression(outputs: OutputsByOperation): `={{${string}}}` {
	const named = (names: string[]) =>
		`[${names.map((name) => `{ type: 'main', displayName: '${name}' }`).join(', ')}]`;
	const branches = Object.entries(outputs)
		.map(([operation, names]) => `$parameter.operation === '${operation}' ? ${named(names)} : `)
		.join('');
	return `={{ ${branches}[{ type: 'main' }] }}`;
}
