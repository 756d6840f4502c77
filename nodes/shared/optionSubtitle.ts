import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { DescriptionError } from './packageError';

/**
 * A node subtitle naming the option chosen in the options parameter `name` as the panel lists it
 * (Retry Later), not by the internal value `$parameter` holds (retryLater). Built from the options
 * themselves, so a new option is named without touching the subtitle.
 */
export function optionSubtitle(
	properties: readonly INodeProperties[],
	name: string,
): `={{${string}}}` {
	const property = properties.find((candidate) => candidate.name === name);
	if (property?.type !== 'options')
		throw new DescriptionError(`No options parameter ${name} to name`);
	const chosen = `$parameter.${name}`;
	// `$parameter.x === "a" ? "A" : …`, ending in the value itself for an option this list lacks.
	const named = (property.options as INodePropertyOptions[])
		.map(
			({ value, name: shown }) =>
				`${chosen} === ${JSON.stringify(value)} ? ${JSON.stringify(shown)} : `,
		)
		.join('');
	return `={{ ${named}${chosen} }}`;
}
