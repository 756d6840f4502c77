import { SettingError } from '../errors';

/** Short, readable, and the same in every run: letters, digits, spaces and `_ - . :`, up to 64 characters. */
const STEP_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9 _.:-]{0,62}[A-Za-z0-9_.:-])?$/;

/**
 * A step's name as Start, Finish and Forget Step use it: trimmed, and refused unless it is a short plain
 * name. It names the step's mark and makes its key, so a name built from data (a timestamp, an id) would
 * give every run a new step and guard nothing.
 */
export function stepName(value: unknown): string {
	// An expression's number or object: "the Step Name 5 is not allowed: use … digits" would puzzle.
	if (typeof value !== 'string' && value !== undefined && value !== null) {
		const kind = Array.isArray(value)
			? 'an array'
			: typeof value === 'object'
				? 'an object'
				: `a ${typeof value}`;
		throw new SettingError(
			`the Step Name is ${kind} (${String(JSON.stringify(value)).slice(0, 80)}), not text: ` +
				'type the name itself, e.g. "charge card", rather than an expression',
		);
	}
	const name = typeof value === 'string' ? value.trim() : '';
	if (!STEP_NAME.test(name)) {
		throw new SettingError(
			`the Step Name ${JSON.stringify(value ?? '')} is not allowed: use 1–64 letters, digits, spaces or _ - . : ` +
				'(starting with a letter or digit), a name unique within the workflow such as "charge card"',
		);
	}
	return name;
}
