import { isoWeekday, monthNumber, twoDigitYearAsLuxon, weekdayNumber } from './calendar';
import { signedOffset, type Reading } from './dateParts';
import { ZONE_ABBREVIATIONS } from './zoneAbbreviations';

// RFC 2822 (RSS's pubDate, email) as n8n's luxon reads it (DateTime.fromRFC2822): comments and folded
// white space dropped, names in their exact case, the weekday checked. A text luxon turns down here
// (the zones UT and UTC, a wrong weekday, lower case) goes on to JavaScript's reading, as in n8n;
// that one reads two-digit years 50–99 as 19xx where luxon reads 61–99.
const RFC_2822 = new RegExp(
	String.raw`^(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s)?(\d{1,2})\s(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)` +
		String.raw`\s(\d{2,4})\s(\d\d):(\d\d)(?::(\d\d))?\s(?:([+-])(\d\d)(\d\d)|(GMT|[ECMP][SD]T|[A-IK-Za-ik-z]))$`,
);

export function rfc2822Date(text: string): Reading {
	const unfolded = text
		.replace(/\([^()]*\)|[\n\t]/g, ' ')
		.replace(/\s\s+/g, ' ')
		.trim();
	const m = RFC_2822.exec(unfolded);
	if (!m) return undefined;
	const year = m[4].length === 2 ? twoDigitYearAsLuxon(Number(m[4])) : Number(m[4]);
	const month = monthNumber(m[3]);
	const day = Number(m[2]);
	if (m[1] && weekdayNumber(m[1]) !== isoWeekday(year, month, day)) return undefined;
	return {
		year,
		month,
		day,
		hour: Number(m[5]),
		minute: Number(m[6]),
		second: Number(m[7] ?? 0),
		fraction: '',
		// Its military letters other than Z have no agreed offset: the RFC reads them as -0000, UTC.
		offsetMinutes: m[8]
			? signedOffset(m[8], m[9], m[10])
			: (ZONE_ABBREVIATIONS[m[11].toUpperCase()] ?? 0),
	};
}
