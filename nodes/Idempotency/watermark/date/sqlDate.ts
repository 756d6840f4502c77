import { signedOffset, type DateParts, type Reading } from './dateParts';
import { isTimeZone } from './timeZone';

// SQL's timestamp text as n8n's luxon reads it (DateTime.fromSQL): a date, a space, a time, then an
// offset or an IANA zone name, with or without a space (2024-08-09 13:44:16.123 +02:00,
// 2024-08-09 13:44:16 Europe/Berlin). A date alone is ISO 8601's; a time alone is no date.
const SQL = new RegExp(
	String.raw`^(\d{4})-(\d\d)-(\d\d) (\d\d)(?::?(\d\d)(?::?(\d\d)(?:[.,](\d+))?)?)?` +
		String.raw` ?(?:([Zz])|([+-])(\d\d)(?::?(\d\d))?|([A-Za-z_+-]+(?:\/[A-Za-z0-9_+-]+){0,2}))?$`,
);

export function sqlDate(text: string): Reading {
	const m = SQL.exec(text);
	// A name Intl does not know (PST) is not a zone here; JavaScript's reading may still know it.
	if (!m || (m[12] !== undefined && !isTimeZone(m[12]))) return undefined;
	const parts: DateParts = {
		year: Number(m[1]),
		month: Number(m[2]),
		day: Number(m[3]),
		hour: Number(m[4]),
		minute: Number(m[5] ?? 0),
		second: Number(m[6] ?? 0),
		fraction: (m[7] ?? '').slice(0, 6),
	};
	if (m[8]) parts.offsetMinutes = 0;
	else if (m[9]) parts.offsetMinutes = signedOffset(m[9], m[10], m[11]);
	else if (m[12] !== undefined) parts.timeZone = m[12];
	return parts;
}
