import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { markValue } from '../../nodes/Idempotency/watermark/markValue';

describe('Value Is Higher: the number text Postgres compares', () => {
	it.each<[unknown, string]>([
		[42, '42'],
		[-3.5, '-3.5'],
		[0, '0'],
		[1e21, '1e+21'],
		[12345678901234567890n, '12345678901234567890'],
		['42', '42'],
		[' 007 ', '007'],
		['+5', '5'],
		['1234567890123456789012345', '1234567890123456789012345'],
		['.5', '.5'],
		['1.25e3', '1.25e3'],
	])('%p → %s', (value, text) => {
		expect(markValue(value, 'number')).toBe(text);
	});

	it.each<[unknown, RegExp]>([
		['abc', /is "abc", which is not a number/],
		['0x10', /is "0x10", which is not a number/],
		['NaN', /not a number/],
		['Infinity', /not a number/],
		[Number.NaN, /is NaN, which is not a number/],
		[Number.POSITIVE_INFINITY, /is Infinity, which is not a number/],
		['1e5000', /out of range/],
		['12 34', /not a number/],
		[true, /is a boolean, not a number/],
		[{ id: 1 }, /is an object, not a number/],
		['', /missing or empty/],
		[null, /missing or empty/],
		[undefined, /missing or empty/],
	])('%p is refused', (value, message) => {
		expect(() => markValue(value, 'number')).toThrow(message);
	});
});

describe('Value Is a Date Later: UTC ISO text with microseconds', () => {
	it.each<[unknown, string]>([
		['2024-08-09T13:44:16Z', '2024-08-09T13:44:16.000000Z'],
		['2024-08-09T13:44:16.123456789Z', '2024-08-09T13:44:16.123456Z'],
		['2024-08-09T15:44:16+02:00', '2024-08-09T13:44:16.000000Z'],
		['2024-08-09T08:14:16-0530', '2024-08-09T13:44:16.000000Z'],
		['2024-08-09T13:44:16.5+00', '2024-08-09T13:44:16.500000Z'],
		['2024-08-09 13:44:16', '2024-08-09T13:44:16.000000Z'],
		['2024-08-09', '2024-08-09T00:00:00.000000Z'],
		['2024-01-01T00:30:00+01:00', '2023-12-31T23:30:00.000000Z'],
		['Fri, 09 Aug 2024 13:44:16 GMT', '2024-08-09T13:44:16.000000Z'],
		['Fri, 09 Aug 2024 15:44:16 +0200', '2024-08-09T13:44:16.000000Z'],
		['9 Aug 24 09:44 EDT', '2024-08-09T13:44:00.000000Z'],
		[new Date('2024-08-09T13:44:16.789Z'), '2024-08-09T13:44:16.789000Z'],
	])('%p → %s', (value, text) => {
		expect(markValue(value, 'date')).toBe(text);
	});

	it('reads a date without a zone in the workflow’s time zone', () => {
		expect(markValue('2024-08-09 13:44:16', 'date', 'America/New_York')).toBe(
			'2024-08-09T17:44:16.000000Z',
		);
		expect(markValue('2024-08-09T13:44:16', 'date', 'Europe/Berlin')).toBe(
			'2024-08-09T11:44:16.000000Z',
		);
		expect(markValue('2024-08-09T13:44:16Z', 'date', 'Europe/Berlin')).toBe(
			'2024-08-09T13:44:16.000000Z',
		);
	});

	it('orders by time when the texts are compared as text too', () => {
		const later = markValue('2024-08-09T13:44:16.000001Z', 'date');
		const earlier = markValue('2024-08-09T15:44:16+02:00', 'date');
		expect(earlier < later).toBe(true);
	});

	it.each<[unknown, RegExp]>([
		['yesterday', /is "yesterday", which is not a date/],
		['now', /not a date/],
		['13:44:16', /is "13:44:16", a time without a date/],
		['0000-01-01', /is "0000-01-01", a date outside the years 0001 to 9999/],
		[1723211056, /the number 1723211056, not a date: .*Value Is Higher/],
		[new Date('nope'), /an invalid Date/],
		[['2024-08-09'], /is an array, not a date/],
		['', /missing or empty/],
	])('%p is refused', (value, message) => {
		expect(() => markValue(value, 'date')).toThrow(message);
	});
});

const REPO = join(__dirname, '..', '..');

/**
 * Maps texts through `expression` (JavaScript of `text`, with require) in a new Node process whose time
 * zone is `zone`. Not process.env.TZ here: Jest gives each test file a copy of process.env, so setting
 * TZ in it does not move this process's zone. `tsx` runs our TypeScript; `node` suffices for n8n.
 */
function inZone(
	zone: string,
	runner: 'node' | 'tsx',
	expression: string,
	texts: string[],
): unknown[] {
	const script = `let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
	const read = (text) => { try { return ${expression}; } catch (e) { return 'refused: ' + e.message; } };
	process.stdout.write(JSON.stringify(JSON.parse(input).map(read)));
});`;
	const bin = runner === 'node' ? process.execPath : join(REPO, 'node_modules', '.bin', 'tsx');
	const out = execFileSync(bin, ['-e', script], {
		cwd: REPO,
		env: { ...process.env, TZ: zone },
		input: JSON.stringify(texts),
	});
	return JSON.parse(out.toString()) as unknown[];
}

/** Where n8n runs: its process's zone (UTC in n8n's Docker image) and the workflow's (Settings → Timezone). */
interface Zones {
	processZone: string;
	workflowZone: string;
}

/**
 * What Remove Duplicates reads (n8n-workflow's tryToParseDateTime), in milliseconds since the epoch, as
 * n8n runs it: luxon's default zone set to the workflow's, as n8n's WorkflowDataProxy sets it.
 */
function n8nReads(texts: string[], { processZone, workflowZone }: Zones): Map<string, unknown> {
	const luxon = "require(require.resolve('luxon', { paths: [require.resolve('n8n-workflow')] }))";
	const read = `((${luxon}).Settings.defaultZone = ${JSON.stringify(workflowZone)}, require('n8n-workflow').tryToParseDateTime(text).toMillis())`;
	const millis = inZone(processZone, 'node', read, texts);
	return new Map(texts.map((text, i) => [text, millis[i]]));
}

/** Our canonical texts for these, or 'refused: …', computed as the node runs in n8n. */
function oursIn(texts: string[], { processZone, workflowZone }: Zones): Map<string, unknown> {
	const read = `require('./nodes/Idempotency/watermark/markValue').markValue(text, 'date', ${JSON.stringify(workflowZone)})`;
	const canonical = inZone(processZone, 'tsx', read, texts);
	return new Map(texts.map((text, i) => [text, canonical[i]]));
}

/** Milliseconds since the epoch of our canonical text (n8n keeps milliseconds; we keep microseconds). */
const millisOf = (canonical: unknown) => Date.parse(`${String(canonical).slice(0, 23)}Z`);

const SAME_AS_N8N: [family: string, text: string][] = [
	['ISO 8601', '2024-08-09T13:44:16Z'],
	['ISO 8601 basic', '20240809T134416Z'],
	['ISO 8601 milliseconds', '2024-08-09T13:44:16.123Z'],
	['ISO 8601 comma fraction', '2024-08-09T13:44:16,5Z'],
	['ISO 8601 offset +hh', '2024-08-09T15:44:16+02'],
	['ISO 8601 offset +hhmm', '2024-08-09T15:44:16+0200'],
	['ISO 8601 offset +hh:mm', '2024-08-09T15:44:16+02:00'],
	['ISO 8601 negative half-hour offset', '2024-08-09T08:14:16-05:30'],
	['ISO 8601 minutes, no zone', '2024-08-09T13:44'],
	['ISO 8601 hour only', '2024-08-09T13Z'],
	['ISO 8601 lower case', '2024-08-09t13:44:16z'],
	['ISO 8601 date', '2024-08-09'],
	['ISO 8601 basic date', '20240809'],
	['ISO 8601 year and month', '2024-08'],
	['ISO 8601 basic year and month', '202408'],
	['ISO 8601 year', '2024'],
	['ISO 8601 ordinal', '2024-222'],
	['ISO 8601 basic ordinal', '2024222'],
	['ISO 8601 week date', '2024-W32-5'],
	['ISO 8601 basic week date', '2024W325'],
	['ISO 8601 week', '2024-W32'],
	['ISO 8601 week 53', '2020-W53-7'],
	['ISO 8601 week date and time', '2024-W32-5T13:44:16Z'],
	['ISO 8601 extended year', '+002024-08-09T13:44:16Z'],
	['RFC 9557 zone', '2024-08-09T13:44:16+02:00[Europe/Berlin]'],
	['RFC 9557 zone, no offset', '2024-08-09T13:44:16[America/New_York]'],
	['HTTP IMF-fixdate', 'Fri, 09 Aug 2024 13:44:16 GMT'],
	['HTTP RFC 850', 'Friday, 09-Aug-24 13:44:16 GMT'],
	['HTTP asctime', 'Fri Aug  9 13:44:16 2024'],
	['RFC 2822 offset', 'Fri, 09 Aug 2024 15:44:16 +0200'],
	['RFC 2822 -0000', 'Fri, 09 Aug 2024 13:44:16 -0000'],
	['RFC 2822 EDT, two-digit year, no seconds', '9 Aug 24 09:44 EDT'],
	['RFC 2822 PDT', 'Fri, 9 Aug 2024 06:44:16 PDT'],
	['RFC 2822 CDT', 'Fri, 09 Aug 2024 08:44:16 CDT'],
	['RFC 2822 UT', 'Fri, 09 Aug 2024 13:44:16 UT'],
	['RFC 2822 Z', 'Fri, 09 Aug 2024 13:44:16 Z'],
	['RFC 2822 comment', 'Fri, 09 Aug 2024 13:44:16 +0000 (UTC)'],
	['RFC 2822 folded white space', 'Fri,  09 Aug\t2024 13:44:16 GMT'],
	['RFC 2822 with UTC (RSS pubDate)', 'Fri, 09 Aug 2024 13:44:16 UTC'],
	['RFC 2822 in lower case', 'fri, 09 aug 2024 13:44:16 gmt'],
	['RFC 2822 with a wrong weekday', 'Thu, 09 Aug 2024 13:44:16 GMT'],
	['RFC 850 with a wrong weekday', 'Tuesday, 09-Aug-24 13:44:16 GMT'],
	['two-digit year 55, as luxon reads it', '9 Aug 55 09:44 EDT'],
	['two-digit year 55, as JavaScript reads it', 'Thu, 9 Aug 55 09:44 EDT'],
	['asctime with one space', 'Fri Aug 9 13:44:16 2024'],
	['SQL', '2024-08-09 13:44:16'],
	['SQL fraction and offset', '2024-08-09 13:44:16.123 +02:00'],
	['SQL offset +hh', '2024-08-09 13:44:16+02'],
	['SQL basic time', '2024-08-09 134416'],
	['SQL IANA zone', '2024-08-09 13:44:16 Europe/Berlin'],
	['SQL IANA zone in winter', '2024-01-09 13:44:16 Europe/Berlin'],
	['SQL IANA zone, lower case', '2024-08-09 13:44:16 europe/berlin'],
	['SQL IANA zone, three parts', '2024-08-09 13:44:16 America/Argentina/Buenos_Aires'],
	['SQL Etc zone', '2024-08-09 13:44:16 Etc/GMT+5'],
	['SQL UTC', '2024-08-09 13:44:16 UTC'],
	['SQL time the clocks skipped', '2024-03-31 02:30:00 Europe/Berlin'],
	// luxon takes the offset the zone has on the day n8n runs: as n8n does, whichever that is.
	['SQL time the clocks repeated', '2024-10-27 02:30:00 Europe/Berlin'],
	['SQL with a US zone Intl does not know', '2024-08-09 13:44:16 PST'],
	[
		'Date.prototype.toString(), UTC',
		'Fri Aug 09 2024 13:44:16 GMT+0000 (Coordinated Universal Time)',
	],
	[
		'Date.prototype.toString(), Berlin',
		'Fri Aug 09 2024 15:44:16 GMT+0200 (Central European Summer Time)',
	],
	[
		'Date.prototype.toString(), New York',
		'Fri Aug 09 2024 09:44:16 GMT-0400 (Eastern Daylight Time)',
	],
	['Date.prototype.toDateString()', 'Fri Aug 09 2024'],
	['Date.prototype.toLocaleString()', '8/9/2024, 1:44:16 PM'],
	['toLocaleString() with ICU’s narrow space', '8/9/2024, 1:44:16\u202fPM'],
	['year/month/day', '2024/08/09 13:44:16'],
	['year/month/day, one digit', '2024/8/9'],
	['year-month-day, one digit', '2024-8-9'],
	['year.month.day', '2024.08.09'],
	['month/day/year', '8/9/2024'],
	['month/day/two-digit year', '08/09/24'],
	['month.day.year', '08.09.2024'],
	['month-day-year', '8-9-2024'],
	['month name, day, year', 'Aug 9, 2024'],
	['full month name and 12-hour time', 'August 9, 2024 1:44 PM'],
	['12:30 AM', 'Sept 9 2024 12:30 AM'],
	['weekday and full names', 'Friday, August 9, 2024'],
	['day, month name, year', '9 Aug 2024'],
	['day-month name-year', '9-Aug-2024'],
	['month name and year', 'Aug 2024'],
	['weekday and numeric date', 'Sat 2024-08-10'],
	['milliseconds and GMT', 'Aug 9 2024 13:44:16.123 GMT'],
	['microseconds and GMT', 'Aug 9 2024 13:44:16.123456 GMT'],
	['GMT+h', 'Aug 9 2024 13:44:16 GMT+2'],
	['UTC+hh:mm', 'Aug 9 2024 13:44:16 UTC+02:00'],
	['bare offset after a time', 'Aug 9 2024 13:44:16 -0500'],
	['a date with Z', '2024-08-09 Z'],
	// What only JavaScript's Date reads, it reads by rolling a day or an hour past its end into the
	// next, by filling in the year 2001, and by skipping words: n8n's reading all the same.
	['30 February, ISO 8601', '2024-02-30T00:00:00Z'],
	['30 February, ISO 8601 date', '2024-02-30'],
	['29 February of a common year', '2023-02-29'],
	['30 February, month/day/year', '2/30/2024'],
	['30 February, month name', 'Feb 30, 2024'],
	['30 February, RFC 2822', 'Fri, 30 Feb 2024 13:44:16 GMT'],
	['31 June, SQL', '2024-06-31 13:44:16'],
	['24:00, ISO 8601', '2024-08-09T24:00:00Z'],
	['24:00 after a month name', 'Aug 9 2024 24:00'],
	['an offset beyond ±18:00', '2024-08-09T13:44:16+19:00'],
	['offset minutes past 59', '2024-08-09T13:44:16+02:99'],
	['a day and month without a year', 'Aug 9'],
	['a day and month without a year, day first', '9 Aug'],
	['a number alone', '1'],
	['a word and a number', 'foo 1'],
	['a word and a year', 'hello 2024'],
	['words before a date', 'Posted on Aug 9, 2024'],
	['an hour with a colon and no minutes', 'Aug 9 2024 13:'],
];

// n8n's process in UTC as in its Docker image, with n8n's default workflow zone (GENERIC_TIMEZONE's
// America/New_York) and with UTC; then a process and a workflow both elsewhere.
const ZONES: Zones[] = [
	{ processZone: 'UTC', workflowZone: 'America/New_York' },
	{ processZone: 'UTC', workflowZone: 'UTC' },
	{ processZone: 'Asia/Kolkata', workflowZone: 'Europe/Berlin' },
];

describe.each(ZONES)(
	'Value Is a Date Later reads every date Remove Duplicates reads as the same instant (process in $processZone, workflow in $workflowZone)',
	(zones) => {
		const texts = SAME_AS_N8N.map(([, text]) => text);
		let n8n: Map<string, unknown>;
		let ours: Map<string, unknown>;
		beforeAll(() => {
			n8n = n8nReads(texts, zones);
			ours = oursIn(texts, zones);
		});

		it.each(SAME_AS_N8N)('%s: %p', (_family, text) => {
			expect(typeof n8n.get(text)).toBe('number');
			expect(millisOf(ours.get(text))).toBe(n8n.get(text));
		});
	},
);

describe('Value Is a Date Later keeps the microseconds n8n drops', () => {
	it.each<[text: string, canonical: string]>([
		['Aug 9 2024 13:44:16.123456 GMT', '2024-08-09T13:44:16.123456Z'],
		['2024-08-09T13:44:16.1234567Z', '2024-08-09T13:44:16.123456Z'],
		['2024-08-09 13:44:16,000001+00', '2024-08-09T13:44:16.000001Z'],
		['20240809T134416.654321Z', '2024-08-09T13:44:16.654321Z'],
		['2024-08-09T13:44:16.5Z', '2024-08-09T13:44:16.500000Z'],
		// Digits that are not the time's fraction (a date's, here) are not taken for it.
		['08.09.2024', '2024-08-09T00:00:00.000000Z'],
	])('%p → %s', (text, canonical) => {
		expect(markValue(text, 'date')).toBe(canonical);
	});
});

describe('Value Is a Date Later refuses what is no date, naming the value', () => {
	it('names the value in its message', () => {
		expect(() => markValue('soon', 'date')).toThrow(
			'Value to Dedupe On is "soon", which is not a date (Value Is a Date Later reads',
		);
		expect(() => markValue('13:44:16', 'date')).toThrow(
			'Value to Dedupe On is "13:44:16", a time without a date: n8n reads it as today, so its mark would move every day',
		);
	});

	// What n8n does not read either.
	const N8N_REFUSES = [
		'yesterday',
		'1723211056',
		'August 9, 2024 at 1:44 PM',
		'2024-08-09 foo',
		'2024-08-09 13:44:16 Mars/Olympus',
		'2024-08-09T13:44:16[Mars/Olympus]',
		'2024-13-01',
		'13/09/2024',
		'2024-08-09T25:00:00Z',
		'Aug 9 2024 13:30 PM',
		'2024-08-09T13:60Z',
		'2024-08-09T13:44:60Z',
		'2021-W53-1',
		'2024-W32-8',
		'2023-366',
		'Fri, 09 Aug 2024 13:44:16 A', // an RFC 2822 military zone
		'2024-08-09T15:44:16 +02:00', // a space before an ISO 8601 offset
	];
	// A time alone, which n8n reads as today.
	const TIMES_ALONE = ['13:44:16', '12', '13:44Z', '1344Z', '134416', '13:44:16 Europe/Berlin'];
	let n8n: Map<string, unknown>;
	beforeAll(() => {
		n8n = n8nReads([...N8N_REFUSES, ...TIMES_ALONE], {
			processZone: 'UTC',
			workflowZone: 'UTC',
		});
	});

	it.each(N8N_REFUSES)('%p, which n8n does not read either', (text) => {
		expect(n8n.get(text)).toMatch(/^refused: /);
		expect(() => markValue(text, 'date')).toThrow(`is "${text}", which is not a date (`);
	});

	it.each(TIMES_ALONE)('%p, a time alone, which n8n puts on today', (text) => {
		const day = 86_400_000;
		expect(Math.abs((n8n.get(text) as number) - Date.now())).toBeLessThan(2 * day);
		expect(() => markValue(text, 'date')).toThrow(`is "${text}", a time without a date`);
	});

	it.each(['0000-01-01', '-000001-01-01', '+010000-01-01'])(
		'%p, a year the mark cannot hold',
		(text) => {
			expect(() => markValue(text, 'date')).toThrow(
				`is "${text}", a date outside the years 0001 to 9999`,
			);
		},
	);
});
