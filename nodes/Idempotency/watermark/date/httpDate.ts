import { isoWeekday, monthNumber, twoDigitYearAsLuxon, weekdayNumber } from './calendar';
import type { Reading } from './dateParts';

// HTTP's dates as n8n's luxon reads them (DateTime.fromHTTP), always UTC, the weekday checked: the
// IMF-fixdate (Fri, 09 Aug 2024 13:44:16 GMT), RFC 850 (Friday, 09-Aug-24 13:44:16 GMT) and asctime
// (Fri Aug  9 13:44:16 2024). A text luxon turns down goes on to the next reader, as in n8n.
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const CLOCK = String.raw`(\d\d):(\d\d):(\d\d)`;
const IMF_FIXDATE = new RegExp(
	String.raw`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) ${MONTH} (\d{4}) ${CLOCK} GMT$`,
);
const RFC_850 = new RegExp(
	String.raw`^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d\d)-${MONTH}-(\d\d) ${CLOCK} GMT$`,
);
const ASCTIME = new RegExp(
	String.raw`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \d|\d\d) ${CLOCK} (\d{4})$`,
);

export function httpDate(text: string): Reading {
	let m = IMF_FIXDATE.exec(text) ?? RFC_850.exec(text);
	if (m) {
		const year = m[4].length === 2 ? twoDigitYearAsLuxon(Number(m[4])) : Number(m[4]);
		return utcDate(m[1], year, m[3], m[2], m.slice(5));
	}
	m = ASCTIME.exec(text);
	if (m) return utcDate(m[1], Number(m[7]), m[2], m[3], m.slice(4, 7));
	return undefined;
}

function utcDate(
	weekday: string,
	year: number,
	monthName: string,
	dayText: string,
	clock: string[],
): Reading {
	const month = monthNumber(monthName);
	const day = Number(dayText);
	if (weekdayNumber(weekday) !== isoWeekday(year, month, day)) return undefined;
	const [hour, minute, second] = clock.map(Number);
	return { year, month, day, hour, minute, second, fraction: '', offsetMinutes: 0 };
}
