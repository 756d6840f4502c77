import { monthNumber, weekdayNumber } from './calendar';
import { notADate, signedOffset, type DateParts, type Reading } from './dateParts';
import { ZONE_ABBREVIATIONS } from './zoneAbbreviations';

// What JavaScript's Date.parse reads beyond the standards, n8n's last resort: Date's own toString()
// (Fri Aug 09 2024 15:44:16 GMT+0200 (Central European Summer Time)), toLocaleString()'s
// 8/9/2024, 1:44:16 PM, and 2024/08/09 13:44:16, Aug 9, 2024, August 9, 2024 1:44 PM, 9 Aug 2024,
// with zones such as UTC, GMT+2 or EST. Read as V8 reads them: numbers alone are month first
// (8/9/2024 and 08.09.2024 are 9 August), a two-digit year 00–49 is 20xx and 50–99 19xx, a weekday is
// skipped. Stricter than V8, which reads "foo 1" as 2001 and "Aug 9" as 9 August 2001: every word
// must be a leading weekday, a month, AM/PM or a zone, and the year must be written.

const TOKENS = /\s+|\d+|[A-Za-z]+|[^\sA-Za-z\d]/g;
const DATE_SEPARATORS = ['-', '/', '.'];

/** What the tokens said so far. */
interface Seen {
	numbers: number[];
	month: number;
	clock: number[];
	clockDone: boolean;
	fraction: string;
	/** 0 for AM, 12 for PM. */
	meridiem?: number;
	/** `word`: a UTC word that an offset may follow (GMT+0200); `set`: nothing more may. */
	zone: 'none' | 'word' | 'set';
	offsetMinutes?: number;
}

export function javascriptDate(text: string): Reading {
	const tokens = text.replace(/\([^()]*\)/g, ' ').match(TOKENS) ?? [];
	const seen: Seen = {
		numbers: [],
		month: 0,
		clock: [],
		clockDone: false,
		fraction: '',
		zone: 'none',
	};
	for (let i = 0; i < tokens.length; i++) {
		const token = tokens[i];
		const read = /^\d/.test(token)
			? readNumber(tokens, i, seen)
			: /^[a-z]/i.test(token)
				? readWord(tokens, i, seen)
				: readSymbol(tokens, i, seen);
		if (read === undefined) return undefined;
		i += read;
	}
	return compose(seen);
}

const isBlank = (token: string | undefined) => token !== undefined && /^\s/.test(token);

/** Whether the token after i separates two parts of the date (2024-08-09, 9-Aug-2024); one left
 * dangling (2024-08-09-) is read as a symbol, and refused. */
function joinsDate(tokens: string[], i: number): boolean {
	return DATE_SEPARATORS.includes(tokens[i + 1]) && /^[\dA-Za-z]/.test(tokens[i + 2] ?? '');
}

/** A number: part of the clock (before ':' or ending it), else part of the date. Returns tokens also used. */
function readNumber(tokens: string[], i: number, seen: Seen): number | undefined {
	const n = Number(tokens[i]);
	const next = tokens[i + 1];
	if (next === ':') {
		if (seen.clockDone || seen.clock.length >= 2) return undefined;
		seen.clock.push(n);
		return 1;
	}
	if (seen.clock.length > 0 && !seen.clockDone) {
		seen.clock.push(n);
		seen.clockDone = true;
		let used = 0;
		if (next === '.' && seen.clock.length === 3 && /^\d/.test(tokens[i + 2] ?? '')) {
			seen.fraction = tokens[i + 2].slice(0, 6);
			used = 2;
		}
		// As V8: a time ends the text or is followed by a space, an offset's sign or Z.
		const after = tokens[i + 1 + used];
		const ends = after === undefined || isBlank(after) || after === '+' || after === '-';
		return ends || after.toLowerCase() === 'z' ? used : undefined;
	}
	if (seen.numbers.length === 3) return undefined;
	seen.numbers.push(n);
	return joinsDate(tokens, i) ? 1 : 0;
}

function readWord(tokens: string[], i: number, seen: Seen): number | undefined {
	const word = tokens[i].toLowerCase();
	const started = seen.numbers.length > 0 || seen.clock.length > 0;
	if (monthNumber(word) && !seen.month) {
		seen.month = monthNumber(word);
		return tokens[i + 1] === '-' && joinsDate(tokens, i) ? 1 : 0;
	}
	if ((word === 'am' || word === 'pm') && seen.clockDone && seen.meridiem === undefined) {
		seen.meridiem = word === 'pm' ? 12 : 0;
		return 0;
	}
	const offset = ZONE_ABBREVIATIONS[word.toUpperCase()];
	if (offset !== undefined && started && seen.zone === 'none') {
		seen.offsetMinutes = offset;
		seen.zone = offset === 0 ? 'word' : 'set';
		return 0;
	}
	if (weekdayNumber(word) && !started && !seen.month) return 0;
	return undefined;
}

/** ',' and spaces separate; a sign after a time or a UTC word starts an offset: +2, +0200, +02:00. */
function readSymbol(tokens: string[], i: number, seen: Seen): number | undefined {
	const token = tokens[i];
	if (token === ',' || isBlank(token)) return 0;
	const offsetMayFollow = seen.zone === 'word' || (seen.zone === 'none' && seen.clockDone);
	if ((token !== '+' && token !== '-') || !offsetMayFollow) return undefined;
	const digits = tokens[i + 1] ?? '';
	if (!/^\d{1,4}$/.test(digits)) return undefined;
	seen.zone = 'set';
	if (tokens[i + 2] === ':') {
		const minutes = tokens[i + 3] ?? '';
		if (digits.length > 2 || !/^\d\d$/.test(minutes)) return undefined;
		seen.offsetMinutes = signedOffset(token, digits, minutes);
		return 3;
	}
	const hours = digits.length <= 2 ? digits : digits.slice(0, -2);
	seen.offsetMinutes = signedOffset(token, hours, digits.length <= 2 ? '0' : digits.slice(-2));
	return 1;
}

const isDay = (n: number) => n >= 1 && n <= 31;

/** The date from its numbers as V8 orders them; undefined when there is no year or no date. */
function compose(seen: Seen): Reading {
	const { numbers, month: named, clock } = seen;
	let year: number;
	let month: number;
	let day: number;
	if (named) {
		month = named;
		if (numbers.length === 1 && !isDay(numbers[0]))
			[year, day] = [numbers[0], 1]; // Aug 2024
		else if (numbers.length !== 2) return undefined;
		else if (!isDay(numbers[0]))
			[year, day] = numbers; // 2024 Aug 9
		else [day, year] = numbers; // 9 Aug 2024, Aug 9 2024
	} else {
		if (numbers.length !== 3) return undefined;
		if (!isDay(numbers[0]))
			[year, month, day] = numbers; // 2024/08/09
		else [month, day, year] = numbers; // 8/9/2024
	}
	if (year < 50) year += 2000;
	else if (year < 100) year += 1900;
	if (clock.length > 0 && !seen.clockDone) return undefined;
	const [clockHour = 0, minute = 0, second = 0] = clock;
	let hour = clockHour;
	if (seen.meridiem !== undefined) {
		if (hour > 12) return notADate(`there is no ${hour} ${seen.meridiem ? 'PM' : 'AM'}`);
		hour = (hour % 12) + seen.meridiem;
	}
	const parts: DateParts = { year, month, day, hour, minute, second, fraction: seen.fraction };
	if (seen.offsetMinutes !== undefined) parts.offsetMinutes = seen.offsetMinutes;
	return parts;
}
