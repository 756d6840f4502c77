/**
 * What a Valid item may carry as `json.body`: the verified bytes read as n8n's webhook server reads them
 * (the expected values are what n8n 2.41.1 put in `json.body` for the same request), or a refusal that
 * names the problem. Every byte sequence has at most one reading, whatever the unsigned Content-Type says.
 */
import { readSignedBody } from '../../nodes/shared/body/signedBody';
import { repeatedJsonKey } from '../../nodes/shared/body/repeatedJsonKey';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const read = (body: string | Buffer, contentType?: unknown) =>
	readSignedBody(typeof body === 'string' ? bytes(body) : body, contentType);
const refusedFor = (body: string | Buffer, contentType?: unknown) => {
	const result = read(body, contentType);
	if (result.ok) throw new Error(`expected a refusal, got the body ${JSON.stringify(result.body)}`);
	return result.problem;
};

describe('JSON bodies', () => {
	it.each([
		['application/json', '{"id":"evt_1","n":2}', { id: 'evt_1', n: 2 }],
		['application/json; charset=utf-8', '{"id":"evt_1"}', { id: 'evt_1' }],
		['Application/JSON; Charset="UTF-8"', '{"id":"evt_1"}', { id: 'evt_1' }],
		// n8n itself leaves json.body unset for these; the node reads them as the JSON they are.
		['application/vnd.api+json', '{"id":"evt_1"}', { id: 'evt_1' }],
		['application/cloudevents+json', '{"id":"evt_1"}', { id: 'evt_1' }],
		['application/json', '[{"id":"evt_1"}]', [{ id: 'evt_1' }]],
		['application/json', '"evt_1"', 'evt_1'],
		[
			'application/json',
			'{"a":{"id":1},"b":{"id":2},"c":[{"id":3},{"id":4}]}',
			{
				a: { id: 1 },
				b: { id: 2 },
				c: [{ id: 3 }, { id: 4 }],
			},
		],
	])('%s %s → the parse of the bytes', (contentType, body, expected) => {
		expect(read(body, contentType)).toEqual({ ok: true, body: expected });
	});

	it('drops one byte-order mark, as n8n does', () => {
		const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{"id":"evt_1"}')]);
		expect(read(withBom, 'application/json')).toEqual({ ok: true, body: { id: 'evt_1' } });
	});

	it('refuses a key named twice in one object, at any depth and however it is escaped', () => {
		expect(refusedFor('{"id":"evt_victim","id":"evt_signed"}', 'application/json')).toBe(
			'the JSON body names body.id twice in one object: JSON readers disagree on which value counts',
		);
		expect(refusedFor('{"data":{"object":{"id":"a","\\u0069d":"b"}}}', 'application/json')).toMatch(
			/names body\.data\.object\.id twice/,
		);
		expect(refusedFor('{"list":[{"x":1},{"id":1,"y":"}","id":2}]}', 'application/json')).toMatch(
			/names body\.list\[1\]\.id twice/,
		);
	});

	it('refuses bytes that are not the JSON the Content-Type says', () => {
		expect(refusedFor('{"id":', 'application/vnd.api+json')).toMatch(
			/^Content-Type application\/vnd\.api\+json, but the body is not valid JSON/,
		);
		expect(refusedFor('id=evt_1', 'application/json')).toMatch(/not valid JSON/);
	});

	it('refuses a charset other than UTF-8 (n8n would decode the same bytes as other text) and invalid UTF-8', () => {
		// n8n 2.41.1 read these bytes under charset=latin1 as {"id":"evt_Ã©"}: another key for the same event.
		expect(refusedFor('{"id":"evt_é"}', 'application/json; charset=latin1')).toMatch(
			/^Content-Type application\/json names charset latin1: signed bodies are read as UTF-8/,
		);
		expect(refusedFor(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'application/json')).toBe(
			'the body is not valid UTF-8',
		);
	});
});

describe('form bodies (application/x-www-form-urlencoded)', () => {
	it("reads them as n8n does: Node's querystring, + as space, an empty value as an empty string", () => {
		expect(
			read(
				'AccountSid=AC1&Body=hello+there&From=%2B15550001&Note=&Flag',
				'application/x-www-form-urlencoded',
			),
		).toEqual({
			ok: true,
			body: { AccountSid: 'AC1', Body: 'hello there', From: '+15550001', Note: '', Flag: '' },
		});
		// The extended `qs` syntax is not n8n's: brackets stay part of the name.
		expect(read('a[b]=1', 'application/x-www-form-urlencoded')).toEqual({
			ok: true,
			body: { 'a[b]': '1' },
		});
	});

	it('passes a field named twice on as n8n parses it: an array of its values, in order, whatever the spelling', () => {
		expect(read('id=evt_1&id=evt_2', 'application/x-www-form-urlencoded')).toEqual({
			ok: true,
			body: { id: ['evt_1', 'evt_2'] },
		});
		expect(read('id=evt_1&%69d=evt_2&x=1', 'application/x-www-form-urlencoded')).toEqual({
			ok: true,
			body: { id: ['evt_1', 'evt_2'], x: '1' },
		});
	});

	it('refuses percent-escapes that do not spell UTF-8 (n8n reads %FF and %FE alike as U+FFFD), naming the text', () => {
		for (const escaped of ['%FF', '%FE', '%C3', '%ED%A0%80', '%E2%82'])
			expect(refusedFor(`id=evt_${escaped}`, 'application/x-www-form-urlencoded')).toBe(
				`the form holds "evt_${escaped}", whose percent-escapes do not spell UTF-8 text: n8n would read it with ` +
					'replacement characters, so different bytes would read as the same value',
			);
		expect(refusedFor('%FF=1', 'application/x-www-form-urlencoded')).toMatch(/holds "%FF"/);
		expect(refusedFor('id=1&note=100%', 'application/x-www-form-urlencoded')).toMatch(
			/holds "100%"/,
		);
		// Valid UTF-8 escapes keep every event apart.
		expect(read('id=evt_%C3%A9', 'application/x-www-form-urlencoded')).toEqual({
			ok: true,
			body: { id: 'evt_é' },
		});
	});

	it('refuses a JSON body relabelled as a form (n8n would read one field named after the whole body)', () => {
		expect(refusedFor('{"id":"evt_1","x":"a=b"}', 'application/x-www-form-urlencoded')).toMatch(
			/but the body is JSON/,
		);
		expect(refusedFor('"evt_1"', 'application/x-www-form-urlencoded')).toMatch(/the body is JSON/);
	});
});

describe('everything else', () => {
	it('refuses multipart, naming it and what the signature does not cover', () => {
		expect(refusedFor('{"id":"evt_1"}', 'multipart/form-data; boundary=x')).toMatch(
			/^Content-Type multipart\/form-data: n8n splits such a request into form fields \(json\.body\) and files/,
		);
		expect(refusedFor('', 'multipart/form-data; boundary=x')).toMatch(/multipart/);
	});

	it.each(['text/plain', 'application/xml', 'text/xml', 'application/octet-stream', 'text/json'])(
		'refuses %s, naming it and saying what to send instead',
		(contentType) => {
			expect(refusedFor('{"id":"evt_1"}', contentType)).toBe(
				`Content-Type ${contentType}: the node passes on only JSON (application/json, …+json) or a form ` +
					'(application/x-www-form-urlencoded), which it reads back from the signed bytes exactly as n8n does; ' +
					'have the sender post one of those',
			);
		},
	);

	it('refuses a body without a Content-Type, and a Content-Type sent as two values', () => {
		expect(refusedFor('{"id":"evt_1"}')).toMatch(/^no Content-Type header/);
		expect(refusedFor('{"id":"evt_1"}', ['application/json', 'text/plain'])).toBe(
			'the Content-Type header was sent more than once',
		);
	});

	it('an empty body is {} under any Content-Type but multipart (n8n leaves json.body unset)', () => {
		for (const contentType of [
			'application/json',
			'application/x-www-form-urlencoded',
			'text/plain',
			undefined,
		])
			expect(read('', contentType)).toEqual({ ok: true, body: {} });
	});
});

describe('repeatedJsonKey', () => {
	it.each([
		['{}', undefined],
		['{"a":1,"b":{"a":2}}', undefined],
		['[{"id":1},{"id":1}]', undefined],
		['{"s":"\\"id\\":","id":1}', undefined],
		['{"a":1,"a":2}', 'body.a'],
		['{"x":[1,{"k":{"z":1,"z":2}}]}', 'body.x[1].k.z'],
	])('%s → %s', (text, expected) => {
		expect(repeatedJsonKey(text)).toBe(expected);
	});
});
