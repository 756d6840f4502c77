/** The inbox operations fall back to the defaults the editor shows (n8n's lint wants them written literally). */
import type { INodeProperties } from 'n8n-workflow';

import {
	INBOX_DEFAULTS,
	inboxProperties,
} from '../../nodes/Idempotency/descriptions/inboxProperties';

const shown = (properties: INodeProperties[]): Record<string, unknown> =>
	Object.fromEntries(
		properties.flatMap((property) =>
			property.type === 'collection'
				? Object.entries(shown(property.options as INodeProperties[]))
				: [[property.name, property.default]],
		),
	);

it('every fallback of the inbox operations is the default its parameter shows', () => {
	const defaults = shown(inboxProperties);
	for (const [name, value] of Object.entries(INBOX_DEFAULTS))
		expect({ name, value: defaults[name] }).toEqual({ name, value });
});
