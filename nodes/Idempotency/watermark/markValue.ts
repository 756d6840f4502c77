import { KeyError } from '../errors';

/** What a watermark compares: Value Is Higher (numbers) or Value Is a Date Later (dates). */
export type MarkKind = 'number' | 'date';

const LABEL = 'Value to Dedupe On';

/**
 * The text Postgres compares for one item's value. Numbers stay decimal text, so an id beyond 2^53 sent
 * as a string keeps every digit (Postgres compares them as numeric). Dates become UTC ISO 8601 with
 * microseconds, so the comparison never depends on the server's TimeZone or DateStyle. Pure; anything
 * that is not clearly a number or a date is refused, never guessed at.
 */
export function markValue(value: unknown, kind: MarkKind): string {
	if (value === undefined || value === null || value === '')
		throw new KeyError(`${LABEL} is missing or empty`);
	return kind === 'number' ? numberText(value) : dateText(value);
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

const ISO =
	/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const RFC_2822 =
	/^(?:[a-z]{3},\s*)?(\d{1,2})\s+([a-z]{3})\s+(\d{2}|\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s+([+-]\d{4}|UT|GMT|Z|[ECMP][SD]T)$/i;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** RFC 2822's named zones, in minutes east of UTC. */
const NAMED_ZONES: Record<string, number> = {
	UT: 0,
	GMT: 0,
	Z: 0,
	EST: -300,
	EDT: -240,
	CST: -360,
	CDT: -300,
	MST: -420,
	MDT: -360,
	PST: -480,
	PDT: -420,
};

interface DateParts {
	year: number;
	month: number;
	day: number;
	hour: number;
	minute: number;
	second: number;
	/** Up to six digits: Postgres keeps microseconds. */
	fraction: string;
	offsetMinutes: number;
}

function dateText(value: unknown): string {
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
	const parts = isoParts(value.trim()) ?? rfc2822Parts(value.trim());
	if (!parts) {
		throw new KeyError(
			`${LABEL} is "${value}", which is not a date (Value Is a Date Later reads ISO 8601, e.g. 2024-08-09T13:44:16Z, and RFC 2822, e.g. Fri, 09 Aug 2024 13:44:16 GMT)`,
		);
	}
	const utc = validUtc(parts);
	if (utc === undefined) throw new KeyError(`${LABEL} is "${value}", which is not a valid date`);
	return canonicalUtc(utc, parts.fraction);
}

/** ISO 8601 (and SQL's space form). Without an offset the time is read as UTC. */
function isoParts(text: string): DateParts | undefined {
	const m = ISO.exec(text);
	if (!m) return undefined;
	return {
		year: Number(m[1]),
		month: Number(m[2]),
		day: Number(m[3]),
		hour: Number(m[4] ?? 0),
		minute: Number(m[5] ?? 0),
		second: Number(m[6] ?? 0),
		fraction: (m[7] ?? '').slice(0, 6),
		offsetMinutes: offsetOf(m[8]),
	};
}

/** RFC 2822, the date of RSS's pubDate and of HTTP headers; two-digit years as the RFC says. */
function rfc2822Parts(text: string): DateParts | undefined {
	const m = RFC_2822.exec(text);
	if (!m) return undefined;
	const month = MONTHS.indexOf(m[2].toLowerCase()) + 1;
	if (month === 0) return undefined;
	const shortYear = Number(m[3]);
	const year = m[3].length === 4 ? shortYear : shortYear < 50 ? 2000 + shortYear : 1900 + shortYear;
	const zone = m[7].toUpperCase();
	return {
		year,
		month,
		day: Number(m[1]),
		hour: Number(m[4]),
		minute: Number(m[5]),
		second: Number(m[6] ?? 0),
		fraction: '',
		offsetMinutes: zone in NAMED_ZONES ? NAMED_ZONES[zone] : offsetOf(zone),
	};
}

function offsetOf(zone: string | undefined): number {
	if (!zone || zone.toUpperCase() === 'Z') return 0;
	const digits = zone.slice(1).replace(':', '');
	const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0);
	return zone[0] === '-' ? -minutes : minutes;
}

/** Milliseconds since the epoch (whole seconds) of valid parts, or undefined (31 February, 25:00, +99:00 …). */
function validUtc(p: DateParts): number | undefined {
	if (Math.abs(p.offsetMinutes) > 18 * 60 || p.year < 1) return undefined;
	const local = new Date(0);
	local.setUTCFullYear(p.year, p.month - 1, p.day);
	local.setUTCHours(p.hour, p.minute, p.second, 0);
	const same =
		local.getUTCFullYear() === p.year &&
		local.getUTCMonth() === p.month - 1 &&
		local.getUTCDate() === p.day &&
		local.getUTCHours() === p.hour &&
		local.getUTCMinutes() === p.minute &&
		local.getUTCSeconds() === p.second;
	if (!same) return undefined;
	const utc = local.getTime() - p.offsetMinutes * 60_000;
	const year = new Date(utc).getUTCFullYear();
	return year >= 1 && year <= 9999 ? utc : undefined;
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
