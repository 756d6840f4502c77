import {
	storedResponseOf,
	storedResponseText,
	type ResponseParameters,
} from '../../nodes/Idempotency/response/storedResponse';

const KIB = 1024;
const stored = (input: Partial<ResponseParameters>, maxBytes = 64 * KIB) =>
	JSON.parse(
		storedResponseText(
			{ statusCode: 200, bodyType: 'json', body: {}, headers: [], ...input },
			maxBytes,
		),
	);

describe('the response Complete stores', () => {
	it('keeps a JSON body as its JSON text, given as a value or as text (whitespace and key order kept)', () => {
		expect(stored({ body: { orderId: 'o_1', total: 10 } }).body).toBe(
			'{"orderId":"o_1","total":10}',
		);
		expect(stored({ body: '{ "b": 1,  "a": 2 }' }).body).toBe('{ "b": 1,  "a": 2 }');
	});

	it('adds the content-type of the body type unless the workflow names one', () => {
		expect(stored({}).headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
		expect(stored({ bodyType: 'text', body: 'ok' })).toEqual({
			statusCode: 200,
			headers: { 'content-type': 'text/plain; charset=utf-8' },
			body: 'ok',
		});
		expect(
			stored({ headers: [{ name: 'Content-Type', value: 'application/problem+json' }] }).headers,
		).toEqual({ 'content-type': 'application/problem+json' });
	});

	it('stores the named headers by their lower-case names, and the status code (a number or its text)', () => {
		const response = stored({
			statusCode: '201',
			headers: [
				{ name: 'Location', value: '/orders/o_1' },
				{ name: 'X-Request-Id', value: 7 },
			],
		});
		expect(response.statusCode).toBe(201);
		expect(response.headers).toMatchObject({ location: '/orders/o_1', 'x-request-id': '7' });
	});

	it('stores headers named like Object members (__proto__, constructor, toString) as any other name', () => {
		const headers = stored({
			headers: [
				{ name: '__proto__', value: 'p' },
				{ name: 'Constructor', value: 'c' },
				{ name: 'toString', value: 't' },
			],
		}).headers;
		expect(Object.keys(headers)).toEqual(['__proto__', 'constructor', 'tostring', 'content-type']);
		expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('p');
		expect(headers).toMatchObject({ constructor: 'c', tostring: 't' });
		expect(() => stored({ headers: [{ name: '__proto__' }, { name: '__PROTO__' }] })).toThrow(
			/"__PROTO__" is named twice/,
		);
	});

	it.each([
		[{ statusCode: 99 }, /^Response Code must be a whole number from 100 to 599, got 99/],
		[{ statusCode: '2xx' }, /got "2xx"/],
		[{ headers: [{ name: 'Bad Name', value: 'x' }] }, /header name "Bad Name" is not a valid/],
		[{ headers: [{ name: 'X-A', value: 'a\r\nSet-Cookie: x' }] }, /"X-A" holds a line break/],
		[
			{
				headers: [
					{ name: 'X-A', value: '1' },
					{ name: 'x-a', value: '2' },
				],
			},
			/"x-a" is named twice/,
		],
		[{ body: '{not json' }, /^Response Body is not valid JSON .*choose Body Type Text/],
	])('refuses %j', (input, message) => {
		expect(() => stored(input as Partial<ResponseParameters>)).toThrow(message);
	});

	it('refuses a response over the bound, saying its size and the bound', () => {
		const body = { text: 'x'.repeat(2 * KIB) };
		expect(() => stored({ body }, KIB)).toThrow(
			/^the response to store is 2\.\d KiB \(its body 2\.\d KiB\), over Max Response Size \(1\.0 KiB\)/,
		);
		expect(stored({ body }, 3 * KIB).body).toHaveLength(2 * KIB + 11);
	});

	it('reads back what Postgres returns (parsed json or its text), and nothing as null', () => {
		const text = storedResponseText(
			{ statusCode: 201, bodyType: 'text', body: 'done', headers: [] },
			KIB,
		);
		expect(storedResponseOf(text)).toEqual(JSON.parse(text));
		expect(storedResponseOf(JSON.parse(text))).toEqual(JSON.parse(text));
		expect(storedResponseOf(null)).toBeNull();
	});

	it('reads back a header named __proto__ as a header', () => {
		const text = storedResponseText(
			{ statusCode: 200, bodyType: 'text', body: '', headers: [{ name: '__proto__', value: 'p' }] },
			KIB,
		);
		const headers = storedResponseOf(text)?.headers ?? {};
		expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('p');
	});
});
