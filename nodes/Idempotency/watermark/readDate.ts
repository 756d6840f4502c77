import { tryToParseDateTime } from 'n8n-workflow';

/** An instant to the microsecond: the UTC milliseconds of its whole second, and the digits after it. */
export interface Instant {
	utcMs: number;
	fraction: string;
}

/** Why a text n8n reads as a date still makes no mark, said to the user after the value. */
export interface NotAMark {
	invalid: string;
}

// A time alone (13:44:16, 12, 1344Z, 13:44:16 Europe/Berlin): n8n's luxon reads it on the day it runs.
const TIME_ALONE =
	/^\d\d(?::?\d\d(?::?\d\d(?:[.,]\d+)?)?)? ?(?:[Zz]|[+-]\d\d(?::?\d\d)?|[A-Za-z_][\w+\-/]*)?(?:\[[^\]]+\])?$/;
// The digits after a time's second, as written: n8n keeps three, Postgres keeps six.
const SECOND_FRACTION = /(?::\d\d|\d{6})[.,](\d+)/;

/**
 * The instant a date text names, read by n8n's own reader, the one Remove Duplicates uses
 * (n8n-workflow's tryToParseDateTime: ISO 8601, HTTP and RFC 2822 dates, SQL, then JavaScript's Date),
 * so every text means here what it means there. A text without a zone is read in `timeZone`, the
 * workflow's: n8n sets luxon's default zone to it whenever it evaluates the workflow's expressions.
 * (What only JavaScript's Date reads, such as 8/9/2024, it reads in the process's zone, as n8n does.)
 *
 * undefined when n8n reads no date. Two things it reads make no mark: a time alone, which it puts on
 * today's date, so the mark would move every day; and a year outside 0001–9999, which the mark's
 * fixed-width text cannot hold (nor Postgres year 0).
 */
export function readDate(text: string, timeZone: string): Instant | NotAMark | undefined {
	let read: ReturnType<typeof tryToParseDateTime>;
	try {
		read = tryToParseDateTime(text, timeZone);
	} catch {
		return undefined;
	}
	// 2024 and 202408 have a time's shape too, but n8n reads them as a year and a month.
	if (TIME_ALONE.test(text) && Number(text.slice(0, 4)) !== read.year)
		return {
			invalid: 'a time without a date: n8n reads it as today, so its mark would move every day',
		};
	const utcMs = read.toMillis();
	const utcYear = new Date(utcMs).getUTCFullYear();
	if (utcYear < 1 || utcYear > 9999) return { invalid: 'a date outside the years 0001 to 9999' };
	return { utcMs: utcMs - read.millisecond, fraction: fractionOf(text, read.millisecond) };
}

/** Up to six digits after the second: those written, where n8n read the same milliseconds from them. */
function fractionOf(text: string, millisecond: number): string {
	const read = String(millisecond).padStart(3, '0');
	const written = SECOND_FRACTION.exec(text)?.[1].slice(0, 6).padEnd(3, '0');
	return written?.startsWith(read) ? written : read;
}
