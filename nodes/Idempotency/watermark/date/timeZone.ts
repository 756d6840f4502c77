import { utcMillis } from './calendar';

// Intl (built into Node, no dependency) knows the IANA zones and their history. One formatter per zone,
// keyed in lower case as Intl reads names, so the cache holds at most the ~600 zones there are.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat | undefined {
	const key = zone.toLowerCase();
	let formatter = formatters.get(key);
	if (!formatter) {
		try {
			formatter = new Intl.DateTimeFormat('en-US', {
				timeZone: zone,
				hourCycle: 'h23',
				era: 'short',
				year: 'numeric',
				month: 'numeric',
				day: 'numeric',
				hour: 'numeric',
				minute: 'numeric',
				second: 'numeric',
			});
		} catch {
			return undefined; // RangeError: a name Intl does not know
		}
		formatters.set(key, formatter);
	}
	return formatter;
}

/** Whether Intl knows this IANA zone name (Europe/Berlin, UTC, Etc/GMT+5). */
export function isTimeZone(name: string): boolean {
	return formatterFor(name) !== undefined;
}

/** The zone's offset at an instant, in milliseconds east of UTC. */
function offsetAt(utcMs: number, formatter: Intl.DateTimeFormat): number {
	const field: Record<string, number> = {};
	let bc = false;
	for (const part of formatter.formatToParts(utcMs)) {
		if (part.type === 'era') bc = part.value === 'BC';
		else field[part.type] = Number(part.value);
	}
	// 1 BC is year 0: the day before 0001-01-01 must not read as a day in year 1
	const year = bc ? 1 - field.year : field.year;
	const wall = utcMillis(year, field.month, field.day, field.hour, field.minute, field.second);
	return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

/**
 * The instant a wall-clock time (given as if it were UTC) names in a zone. Where the clocks went back
 * and the time happened twice, the first; where they went forward and it never happened, it is read
 * with the offset before the change (02:30 becomes 03:30), as n8n's luxon does. (For the repeated hour
 * luxon takes whichever offset the zone has on the day it runs; a mark must not depend on that.)
 */
export function zonedToUtc(wallMs: number, zone: string): number {
	const formatter = formatterFor(zone);
	if (!formatter) throw new Error(`Unknown time zone ${zone}`);
	const day = 86_400_000;
	const before = offsetAt(wallMs - day, formatter);
	const after = offsetAt(wallMs + day, formatter);
	const early = wallMs - before;
	if (offsetAt(early, formatter) === before) return early;
	const late = wallMs - after;
	if (offsetAt(late, formatter) === after) return late;
	return early;
}
