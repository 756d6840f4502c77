import type { IExecuteFunctions } from 'n8n-workflow';

import { SettingError } from '../../errors';

/**
 * A switch as n8n may hand it over: a boolean, or text when the field holds an expression ("true" from a
 * query string). Anything else is refused with the field's name and what it got: read as the default, a
 * Dry Run's "yes" would run for real.
 */
function readBoolean(value: unknown, label: string): boolean {
	if (typeof value === 'boolean') return value;
	const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
	if (text === 'true') return true;
	if (text === 'false') return false;
	const shown = typeof value === 'string' ? `"${value}"` : String(value);
	throw new SettingError(`${label} must be true or false, got ${shown}`);
}

/**
 * A switch the node reads once per execution (item 0's value), by readBoolean: text "true" from an
 * expression such as {{ $env.KEEP_EVENTS }} is on, where reading it as not-`true` would drop the setting.
 */
export function readSwitch(
	context: IExecuteFunctions,
	name: string,
	fallback: boolean,
	label: string,
): boolean {
	return readBoolean(context.getNodeParameter(name, 0, fallback), label);
}
