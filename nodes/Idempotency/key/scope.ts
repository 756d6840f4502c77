import { KeyError } from '../errors';

const SCOPE_PATTERN = /^[^\s\p{Cc}\p{Cs}]{1,100}$/u;

/** A scope goes in front of every key (`<scope>:…`) and names a watermark: short, printable, no spaces. */
export function checkScope(scope: string): string {
	if (!SCOPE_PATTERN.test(scope)) {
		throw new KeyError(
			`the scope "${scope}" must be 1–100 characters with no spaces or control characters`,
		);
	}
	return scope;
}

/** Where one scope's keys begin: every key of scope `s` starts with `s:`. */
export function scopePrefix(scope: string): string {
	return `${checkScope(scope)}:`;
}
