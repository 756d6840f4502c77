import { SettingError } from '../../errors';

/**
 * A number parameter as n8n may hand it over: a number, or text when the field holds an expression
 * ("30" from `{{ "30" }}`). Anything else is refused with the field's name and what it got.
 */
export function readNumber(
	value: unknown,
	label: string,
	rule: { min: number; max?: number; integer?: boolean },
): number {
	const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	const shown = typeof value === 'string' ? `"${value}"` : String(value);
	const range = rule.max === undefined ? `${rule.min} or more` : `from ${rule.min} to ${rule.max}`;
	const wanted = `${rule.integer ? 'a whole number' : 'a number'} ${range}`;
	if (typeof number !== 'number' || !Number.isFinite(number))
		throw new SettingError(`${label} must be ${wanted}, got ${shown}`);
	if (
		number < rule.min ||
		(rule.max !== undefined && number > rule.max) ||
		(rule.integer && !Number.isInteger(number))
	) {
		throw new SettingError(`${label} must be ${wanted}, got ${shown}`);
	}
	return number;
}
