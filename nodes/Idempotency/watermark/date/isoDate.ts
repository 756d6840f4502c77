import { daysInMonth, isLeapYear, isoWeekday, utcMillis } from './calendar';
import { notADate, signedOffset, type DateParts, type Reading } from './dateParts';
import { isTimeZone } from './timeZone';

// ISO 8601 as n8n's luxon reads it (DateTime.fromISO): extended or basic (20240809T134416Z), a calendar
// date, a year and month, a year alone, an ordinal date (2024-222) or a week date (2024-W32-5), then
// optionally T, a time to any precision, an offset and an RFC 9557 zone ([Europe/Berlin]). A time
// alone is refused: luxon puts it on today's date, which is no date a feed sent.
const TIME = String.raw`(\d\d)(?::?(\d\d)(?::?(\d\d)(?:[.,](\d+))?)?)?`;
// A space before the offset too: this reader took it before it followed luxon, which does not.
const ZONE = String.raw`\s*(?:([Zz])|([+-])(\d\d)(?::?(\d\d))?)?(?:\[([A-Za-z_+-]+(?:\/[A-Za-z0-9_+-]+){0,2})\])?`;
const AT = `(?:[Tt]${TIME}${ZONE})?$`;
const CALENDAR = new RegExp(String.raw`^([+-]\d{6}|\d{4})(?:-?(\d\d)(?:-?(\d\d))?)?` + AT);
const WEEK = new RegExp(String.raw`^(\d{4})-?W(\d\d)(?:-?(\d))?` + AT);
const ORDINAL = new RegExp(String.raw`^(\d{4})-?(\d{3})` + AT);

/** The match groups after the date's own: hour, minute, second, fraction, Z, sign, hh, mm, zone. */
type TimeGroups = (string | undefined)[];

export function isoDate(text: string): Reading {
	let m = CALENDAR.exec(text);
	if (m) {
		const [year, month, day] = [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
		return withTime({ year, month, day }, m.slice(4));
	}
	m = WEEK.exec(text);
	if (m) return weekDate(Number(m[1]), Number(m[2]), Number(m[3] ?? 1), m.slice(4));
	m = ORDINAL.exec(text);
	if (m) return ordinalDate(Number(m[1]), Number(m[2]), m.slice(3));
	return undefined;
}

type Day = Pick<DateParts, 'year' | 'month' | 'day'>;

/** The time of a text that wrote only a date. */
const MIDNIGHT = { hour: 0, minute: 0, second: 0, fraction: '' };

function withTime(date: Day, g: TimeGroups): Reading {
	const [hour, minute, second, fraction, z, sign, hh, mm, zone] = g;
	if (zone !== undefined && !isTimeZone(zone)) return undefined;
	const parts: DateParts = { ...date, ...MIDNIGHT };
	if (hour !== undefined) {
		parts.hour = Number(hour);
		parts.minute = Number(minute ?? 0);
		parts.second = Number(second ?? 0);
		parts.fraction = (fraction ?? '').slice(0, 6);
	}
	// Like luxon, a bracketed zone decides the instant and the offset beside it is not read.
	if (zone !== undefined) parts.timeZone = zone;
	else if (z) parts.offsetMinutes = 0;
	else if (sign) parts.offsetMinutes = signedOffset(sign, hh as string, mm);
	return parts;
}

/** ISO weeks start on Monday, and week 1 is the one holding the year's first Thursday. */
function weekDate(year: number, week: number, weekday: number, g: TimeGroups): Reading {
	const jan1 = isoWeekday(year, 1, 1);
	const weeks = jan1 === 4 || (isLeapYear(year) && jan1 === 3) ? 53 : 52;
	if (week < 1 || week > weeks) return notADate(`${year} has weeks 1 to ${weeks}, not ${week}`);
	if (weekday < 1 || weekday > 7) return notADate(`a week has days 1 to 7, not ${weekday}`);
	const mondayOfWeek1 = utcMillis(year, 1, 4) - (isoWeekday(year, 1, 4) - 1) * 86_400_000;
	const day = new Date(mondayOfWeek1 + ((week - 1) * 7 + weekday - 1) * 86_400_000);
	return withTime(
		{ year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() },
		g,
	);
}

function ordinalDate(year: number, ordinal: number, g: TimeGroups): Reading {
	const days = isLeapYear(year) ? 366 : 365;
	if (ordinal < 1 || ordinal > days)
		return notADate(`${year} has days 1 to ${days}, not ${ordinal}`);
	let month = 1;
	let day = ordinal;
	while (day > daysInMonth(year, month)) day -= daysInMonth(year, month++);
	return withTime({ year, month, day }, g);
}
