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

	it('orders by time when the texts are compared as text too', () => {
		const later = markValue('2024-08-09T13:44:16.000001Z', 'date');
		const earlier = markValue('2024-08-09T15:44:16+02:00', 'date');
		expect(earlier < later).toBe(true);
	});

	it.each<[unknown, RegExp]>([
		['yesterday', /is "yesterday", which is not a date/],
		['now', /not a date/],
		['2024-02-30', /is "2024-02-30", which is not a valid date/],
		['2024-08-09T24:00:00Z', /not a valid date/],
		['2024-08-09T13:44:16+19:00', /not a valid date/],
		['1', /not a date/],
		[1723211056, /the number 1723211056, not a date: .*Value Is Higher/],
		[new Date('nope'), /an invalid Date/],
		[['2024-08-09'], /is an array, not a date/],
		['', /missing or empty/],
	])('%p is refused', (value, message) => {
		expect(() => markValue(value, 'date')).toThrow(message);
	});
});
