import type { NotADate } from './dateParts';
import { httpDate } from './httpDate';
import { instantOf } from './instant';
import { isoDate } from './isoDate';
import { javascriptDate } from './javascriptDate';
import { rfc2822Date } from './rfc2822Date';
import { sqlDate } from './sqlDate';

/** An instant to the microsecond: the UTC milliseconds of its whole second, and the digits after it. */
export interface Instant {
	utcMs: number;
	fraction: string;
}

// The formats in the order n8n's tryToParseDateTime (Remove Duplicates' reader) tries them, so a text
// two of them read means what it means there. The first that knows the format decides.
const READERS = [isoDate, httpDate, rfc2822Date, sqlDate, javascriptDate];

/** The instant a date text names, why it names none (30 February), or undefined: no format we read. */
export function readDate(text: string): Instant | NotADate | undefined {
	for (const read of READERS) {
		const reading = read(text);
		if (reading === undefined) continue;
		if ('invalid' in reading) return reading;
		const utcMs = instantOf(reading);
		return typeof utcMs === 'number' ? { utcMs, fraction: reading.fraction } : utcMs;
	}
	return undefined;
}
