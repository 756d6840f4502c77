import { SettingError } from '../errors';

const SCOPE_PATTERN = /^[^\s\p{Cc}\p{Cs}]{1,100}$/u;

/**
 * What every key made without a Scope starts with, before its colon: `evt:` (an id), `evt-sha256:` (a long
 * id, hashed), `sha256:` (the raw bytes), `sha256-json:` (the canonical JSON), `sha256-value:` (a long
 * expression value), as deriveKey makes them.
 */
export const UNSCOPED_KEY_PREFIXES: readonly string[] = [
	'evt',
	'evt-sha256',
	'sha256',
	'sha256-json',
	'sha256-value',
];

/** What Idempotency Burst's Item-ID claims start with, before their `:`. */
export const BURST_ITEM_KEY_PREFIX = 'burst';

/**
 * No Scope may be one of these, in any operation: its keys would share a prefix with keys made another way,
 * so a claim could take one of theirs and Clear or Take Due would reach them.
 */
export const RESERVED_KEY_PREFIXES: readonly string[] = [
	...UNSCOPED_KEY_PREFIXES,
	BURST_ITEM_KEY_PREFIX,
];

/** A scope goes in front of every key (`<scope>:…`) and names a watermark: short, printable, no spaces. */
export function checkScope(scope: string): string {
	if (!SCOPE_PATTERN.test(scope)) {
		throw new SettingError(
			`the scope "${scope}" must be 1–100 characters with no spaces or control characters`,
		);
	}
	if (RESERVED_KEY_PREFIXES.includes(scope)) {
		const others =
			scope === BURST_ITEM_KEY_PREFIX
				? "Idempotency Burst's Item-ID claims"
				: 'keys made without a Scope';
		throw new SettingError(
			`Scope "${scope}" is refused: ${others} start with "${scope}:" too, so a claim could take one of theirs ` +
				`and Clear or Take Due would reach them (reserved: ${RESERVED_KEY_PREFIXES.join(', ')})`,
		);
	}
	return scope;
}

/** Where one scope's keys begin: every key of scope `s` starts with `s:`. */
export function scopePrefix(scope: string): string {
	return `${checkScope(scope)}:`;
}

/** A Scope field that may be left empty (null: none), checked as every scope is. */
export function readOptionalScope(value: unknown): string | null {
	const scope = String(value ?? '').trim();
	return scope === '' ? null : checkScope(scope);
}
