/** English month and weekday names, lower case, as the formats read here spell them. */
export const MONTHS = [
	'january',
	'february',
	'march',
	'april',
	'may',
	'june',
	'july',
	'august',
	'september',
	'october',
	'november',
	'december',
];
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** 1–12 for `Aug` or `August` (any case), else 0. */
export function monthNumber(name: string): number {
	const lower = name.toLowerCase();
	return MONTHS.findIndex((m) => lower.length >= 3 && m.startsWith(lower)) + 1;
}

export function isLeapYear(year: number): boolean {
	return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

export function daysInMonth(year: number, month: number): number {
	if (month === 2) return isLeapYear(year) ? 29 : 28;
	return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Milliseconds since the epoch of a UTC wall-clock time. Not Date.UTC: it reads years 0–99 as
 * 1900–1999; fields past their range roll over, so check them first.
 */
export function utcMillis(
	year: number,
	month: number,
	day: number,
	hour = 0,
	minute = 0,
	second = 0,
): number {
	const date = new Date(0);
	date.setUTCFullYear(year, month - 1, day);
	date.setUTCHours(hour, minute, second, 0);
	return date.getTime();
}

/** ISO weekday, 1 (Monday) to 7 (Sunday). */
export function isoWeekday(year: number, month: number, day: number): number {
	return ((new Date(utcMillis(year, month, day)).getUTCDay() + 6) % 7) + 1;
}

/** 1 (Monday) to 7 for `Fri` or `Friday` (any case), else 0. */
export function weekdayNumber(name: string): number {
	const lower = name.toLowerCase();
	return WEEKDAYS.findIndex((d) => d === lower || d.slice(0, 3) === lower) + 1;
}

/** A two-digit year as n8n's luxon reads it: 00–60 are 20xx, 61–99 are 19xx. */
export function twoDigitYearAsLuxon(year: number): number {
	return year > 60 ? 1900 + year : 2000 + year;
}
