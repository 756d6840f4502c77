import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ChoiceError } from './packageError';

/**
 * The values an options parameter offers, from every property that declares it (one name may be declared
 * once per display condition). `path` reaches into a collection: `options.payloadFingerprint`.
 */
function offeredValues(properties: readonly INodeProperties[], path: string): string[] {
	const [name, ...rest] = path.split('.');
	const values: string[] = [];
	for (const property of properties.filter((candidate) => candidate.name === name)) {
		const options = (property.options ?? []) as Array<INodeProperties | { value?: unknown }>;
		if (rest.length > 0) {
			values.push(...offeredValues(options as INodeProperties[], rest.join('.')));
		} else if (property.type === 'options' || property.type === 'multiOptions') {
			for (const option of options)
				if ('value' in option && typeof option.value === 'string') values.push(option.value);
		}
	}
	return [...new Set(values)];
}

// Descriptions never change at run time: what each offers is collected once, not on every item's read.
const offeredCache = new WeakMap<readonly INodeProperties[], Map<string, string[]>>();

function offeredOnce(properties: readonly INodeProperties[], path: string): string[] {
	let byPath = offeredCache.get(properties);
	if (!byPath) offeredCache.set(properties, (byPath = new Map()));
	let offered = byPath.get(path);
	if (!offered) byPath.set(path, (offered = offeredValues(properties, path)));
	return offered;
}

/**
 * An options parameter's value, refused when the description does not offer it. A workflow file or an
 * expression can hold any text; a router that guessed would run another operation than the one asked for.
 */
export function readChoice<T extends string>(
	context: IExecuteFunctions,
	properties: readonly INodeProperties[],
	path: string,
	index: number,
	fallback: T,
): T {
	const value: unknown = context.getNodeParameter(path, index, fallback);
	const offered = offeredOnce(properties, path);
	if (typeof value === 'string' && offered.includes(value)) return value as T;
	throw new ChoiceError(
		`Parameter "${path}" is ${JSON.stringify(value)}, which this node does not offer; one of ${offered.join(', ')}`,
		{ itemIndex: index },
	);
}
