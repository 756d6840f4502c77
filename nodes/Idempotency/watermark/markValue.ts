import { KeyError } from '../errors';
import { readDate } from './readDate';

/** What a watermark compares: Value Is Higher (numbers) or Value Is a Date Later (dates). */
export type MarkKind = 'number' | 'date';

const LABEL = 'Value to Dedupe On';

/**
 * The text Postgres compares for one item's value. Numbers stay decimal text, so an id beyond 2^53 sent
 * as a string keeps every digit (Postgres compares them as numeric). Dates become UTC ISO 8601 with
 * microseconds, so the comparison never depends on the server's TimeZone or DateStyle; a date is read
 * as Remove Duplicates reads it (./readDate.ts), one without a zone in `timeZone` (the workflow's).
 * No I/O; anything that is not a number, or that n8n does not read as a date, is refused.
 */
export function markValue(value: unknown, kind: MarkKind, timeZone = 'UTC'): string {
	if (value === undefined || value === null || value === '')
		throw new KeyError(`${LABEL} is missing or empty`);
	return kind === 'number' ? numberText(value) : dateText(value, timeZone);
}

// Decimal digits with an optional sign, fraction and exponent. Not NaN, Infinity or hex: Postgres's
// numeric sorts NaN above every number, and Number("0x10") is 16, which no one means by an id.
const DECIMAL = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?$/;
const MAX_EXPONENT = 1000;
const MAX_DIGITS = 200;

function numberText(value: unknown): string {
	if (typeof value === 'bigint') return value.toString();
	if (typeof value === 'number') {
		if (!Number.isFinite(value)) throw new KeyError(`${LABEL} is ${value}, which is not a number`);
		return String(value);
	}
	if (typeof value !== 'string') throw new KeyError(`${LABEL} is ${kindOf(value)}, not a number`);
	const text = value.trim();
	const match = DECIMAL.exec(text);
	if (!match || text.length > MAX_DIGITS) {
		throw new KeyError(
			`${LABEL} is "${value}", which is not a number (Value Is Higher compares decimal numbers such as 42, -3.5 or "1234567890123456789")`,
		);
	}
	if (Math.abs(Number(match[3] ?? 0)) > MAX_EXPONENT)
		throw new KeyError(`${LABEL} is "${value}", a number out of range`);
	return match[1] === '+' ? text.slice(1) : text;
}

function dateText(value: unknown, timeZone: string): string {
	if (value instanceof Date) {
		if (Number.isNaN(value.getTime())) throw new KeyError(`${LABEL} is an invalid Date`);
		return canonicalUtc(value.getTime(), String(value.getUTCMilliseconds()).padStart(3, '0'));
	}
	if (typeof value === 'number' || typeof value === 'bigint') {
		throw new KeyError(
			`${LABEL} is the number ${value}, not a date: for epoch seconds or milliseconds use Value Is Higher than Any Previous Value`,
		);
	}
	if (typeof value !== 'string') throw new KeyError(`${LABEL} is ${kindOf(value)}, not a date`);
	const instant = readDate(value.trim(), timeZone);
	if (!instant) {
		throw new KeyError(
			`${LABEL} is "${value}", which is not a date (Value Is a Date Later reads the dates Remove Duplicates reads, with n8n's own reader: ISO 8601 such as 2024-08-09T13:44:16Z, RFC 2822 and HTTP dates such as Fri, 09 Aug 2024 13:44:16 GMT, SQL's 2024-08-09 13:44:16+02, and JavaScript's forms such as Aug 9, 2024 1:44 PM)`,
		);
	}
	if ('invalid' in instant) throw new KeyError(`${LABEL} is "${value}", ${instant.invalid}`);
	return canonicalUtc(instant.utcMs, instant.fraction);
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: fixed width, so its text order is its time order too. */
function canonicalUtc(utcMs: number, fraction: string): string {
	const wholeSeconds = new Date(utcMs - (((utcMs % 1000) + 1000) % 1000));
	return `${wholeSeconds.toISOString().slice(0, 19)}.${fraction.padEnd(6, '0')}Z`;
}

function kindOf(value: unknown): string {
	if (Array.isArray(value)) return 'an array';
	if (typeof value === 'object') return 'an object';
	return `a ${typeof value}`;
}
