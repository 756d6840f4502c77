import { daysInMonth, MONTHS, utcMillis } from './calendar';
import { notADate, type DateParts, type NotADate } from './dateParts';
import { zonedToUtc } from './timeZone';

/** ±18:00, the widest offset ISO 8601 readers take; no zone has been past ±14:00. */
const MAX_OFFSET_MINUTES = 18 * 60;

/**
 * Milliseconds since the epoch of the parts' whole second, or why they are no date. Nothing rolls
 * over: JavaScript's Date reads 30 February as 1 March, and n8n with it; a mark must not.
 */
export function instantOf(p: DateParts): number | NotADate {
	if (p.month < 1 || p.month > 12) return notADate(`there is no month ${p.month}`);
	const days = daysInMonth(p.year, p.month);
	if (p.day < 1 || p.day > days) {
		const month = MONTHS[p.month - 1];
		return notADate(`${month[0].toUpperCase()}${month.slice(1)} ${p.year} has ${days} days`);
	}
	// 24:00, which ISO 8601 allows for the end of a day, too: one instant, one text (00:00 the next day).
	if (p.hour > 23) return notADate(`there is no hour ${p.hour}`);
	if (p.minute > 59) return notADate(`there is no minute ${p.minute}`);
	if (p.second > 59) return notADate(`there is no second ${p.second}`);
	const offset = p.offsetMinutes ?? 0;
	if (!(Math.abs(offset) <= MAX_OFFSET_MINUTES)) return notADate('its offset is beyond ±18:00');
	if (p.year < 1 || p.year > 9999) return notADate('it is outside the years 0001 to 9999');
	const wall = utcMillis(p.year, p.month, p.day, p.hour, p.minute, p.second);
	const utc = p.timeZone ? zonedToUtc(wall, p.timeZone) : wall - offset * 60_000;
	const utcYear = new Date(utc).getUTCFullYear();
	if (utcYear < 1 || utcYear > 9999) return notADate('it is outside the years 0001 to 9999');
	return utc;
}
