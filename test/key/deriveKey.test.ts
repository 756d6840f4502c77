import { createHash } from 'node:crypto';

import { canonicalJson } from '../../nodes/Idempotency/key/canonicalJson';
import { deriveKey, hasEventId } from '../../nodes/Idempotency/key/deriveKey';
import { payloadFingerprint } from '../../nodes/Idempotency/key/fingerprint';
import type { KeyInput, KeyRule } from '../../nodes/Idempotency/key/keyRule';

const sha = (data: string) => createHash('sha256').update(data).digest('hex');
const webhook = (
	raw: string | undefined,
	body: unknown,
	headers: Record<string, unknown> = {},
): KeyInput => ({
	json: { headers, body },
	rawBody: raw === undefined ? undefined : Buffer.from(raw, 'utf8'),
});
const AUTO: KeyRule = { source: 'auto' };

describe('deriveKey: the default rule (evt: + body.id, else sha256: of the raw bytes)', () => {
	const cases: Array<[string, KeyInput, string, string]> = [
		['string id', webhook('{"id":"evt_1"}', { id: 'evt_1' }), 'evt:evt_1', 'body_id'],
		['numeric id', webhook('{"id":42}', { id: 42 }), 'evt:42', 'body_id'],
		[
			'numeric and string ids are the same id',
			webhook(undefined, { id: '42' }),
			'evt:42',
			'body_id',
		],
		[
			'id with quotes and SQL',
			webhook(undefined, { id: `x'); DROP TABLE t;--"` }),
			`evt:x'); DROP TABLE t;--"`,
			'body_id',
		],
		['unicode id', webhook(undefined, { id: 'événement-😀' }), 'evt:événement-😀', 'body_id'],
		[
			'no id: hash of the exact raw bytes',
			webhook('{"a": 1}', { a: 1 }),
			`sha256:${sha('{"a": 1}')}`,
			'raw_body',
		],
		[
			'null id counts as no id',
			webhook('{"id":null,"a":1}', { id: null, a: 1 }),
			`sha256:${sha('{"id":null,"a":1}')}`,
			'raw_body',
		],
		[
			'empty-string id counts as no id',
			webhook('{"id":""}', { id: '' }),
			`sha256:${sha('{"id":""}')}`,
			'raw_body',
		],
		[
			'no raw bytes: canonical JSON of the body',
			webhook(undefined, { b: 2, a: 1 }),
			`sha256-json:${sha('{"a":1,"b":2}')}`,
			'canonical_json',
		],
		[
			'array body without bytes',
			webhook(undefined, [1, 2]),
			`sha256-json:${sha('[1,2]')}`,
			'canonical_json',
		],
		['item without body: the json itself', { json: { id: 'job-7', x: 1 } }, 'evt:job-7', 'body_id'],
	];
	it.each(cases)('%s', (_label, input, key, origin) => {
		const derived = deriveKey(input, AUTO);
		expect(derived.key).toBe(key);
		expect(derived.origin).toBe(origin);
		// The node skips reading the raw bytes exactly when the id alone makes the key.
		expect(hasEventId(input.json)).toBe(origin === 'body_id');
	});

	it('a repeat with a different stripe-signature header keeps the key', () => {
		const raw = '{"type":"checkout.session.completed","data":{}}';
		const signed = (signature: string) =>
			deriveKey(webhook(raw, JSON.parse(raw), { 'stripe-signature': signature }), AUTO);
		const first = signed('t=1,v1=aaa');
		const retry = signed('t=2,v1=bbb');
		expect(retry.key).toBe(first.key);
		expect(first.key).toMatch(/^sha256:[0-9a-f]{64}$/);
	});

	it('whitespace differences change a raw-bytes key but not a canonical-JSON key', () => {
		expect(deriveKey(webhook('{"a":1}', { a: 1 }), AUTO).key).not.toBe(
			deriveKey(webhook('{ "a": 1 }', { a: 1 }), AUTO).key,
		);
		expect(deriveKey(webhook(undefined, { a: 1, b: [1, { d: 1, c: 2 }] }), AUTO).key).toBe(
			deriveKey(webhook(undefined, { b: [1, { c: 2, d: 1 }], a: 1 }), AUTO).key,
		);
	});

	it.each([
		['object id', { id: { nested: 1 } }, /body\.id is an object/],
		['array id', { id: [1] }, /body\.id is an array/],
		['boolean id', { id: true }, /body\.id is a boolean/],
	])('refuses an %s instead of colliding', (_label, body, message) => {
		expect(() => deriveKey(webhook('{}', body), AUTO)).toThrow(message);
	});

	it.each([
		['no body at all', { json: { headers: {} } } as KeyInput],
		['empty object body', webhook(undefined, {})],
		['null body', webhook(undefined, null)],
		['empty raw body and empty json', webhook('', {})],
	])('fails with a clear message for %s', (_label, input) => {
		expect(() => deriveKey(input, AUTO)).toThrow(
			/no key: the body is empty and there are no request bytes to hash/,
		);
	});

	it('hashes an id too long for an index entry instead of failing', () => {
		const id = 'x'.repeat(10_000);
		const derived = deriveKey(webhook(undefined, { id }), AUTO);
		expect(derived.key).toBe(`evt-sha256:${sha(id)}`);
		expect(derived.hashedLongValue).toBe(true);
		const atLimit = 'y'.repeat(512); // the longest id kept as it is: 512 bytes
		expect(deriveKey(webhook(undefined, { id: atLimit }), AUTO).key).toBe(`evt:${atLimit}`);
	});

	it('hashes an id holding a NUL byte (Postgres text cannot store it)', () => {
		expect(deriveKey(webhook(undefined, { id: 'a\u0000b' }), AUTO).key).toBe(
			`evt-sha256:${sha('a\u0000b')}`,
		);
	});
});

describe('ids that would change on their way through Postgres', () => {
	const idKey = (id: unknown) => deriveKey({ json: { body: { id } } }, AUTO);

	it('hashes an id holding a lone surrogate, from its UTF-16 code units, so two such ids never share a key', () => {
		const high = idKey('evt_\ud800');
		const low = idKey('evt_\udfff');
		expect(high.key).toBe(
			`evt-sha256:${createHash('sha256').update(Buffer.from('evt_\ud800', 'utf16le')).digest('hex')}`,
		);
		expect(high.hashedLongValue).toBe(true);
		expect(low.key).not.toBe(high.key);
		// A well-formed pair is text Postgres stores as is: it stays readable.
		expect(idKey('evt_\ud83d\ude00').key).toBe('evt:evt_😀');
	});

	it('refuses a scope that is not well-formed text', () => {
		expect(() => deriveKey({ json: { body: { id: 'x' } } }, AUTO, 'billing\ud800')).toThrow(
			/the scope/,
		);
	});

	it.each([NaN, Infinity, -Infinity])('names %p as not a usable id', (id) => {
		expect(() => idKey(id)).toThrow(
			`body.id is ${id}, which is not a usable id (a finite number or a string is)`,
		);
	});
});

describe('a value that reads as a hashed one', () => {
	it('is hashed too, so it can never be the key of the long value it names', () => {
		// A key expression (or a burst key) may be what a caller sends, e.g. {{ $json.headers['x-key'] }}.
		const keyOf = (value: string) => deriveKey({ json: {} }, { source: 'expression', value }).key;
		const long = 'k'.repeat(600);
		expect(keyOf(long)).toBe(`sha256-value:${sha(long)}`);
		// Sent as is, the hashed form took the long key's claim (before, the two were one key).
		const forged = `sha256-value:${sha(long)}`;
		expect(keyOf(forged)).toBe(`sha256-value:${sha(forged)}`);
		expect(keyOf('sha256:abc')).toBe('sha256:abc'); // other prefixes are the user's to write
	});
});

describe('a key header sent twice', () => {
	it('refuses the value Node makes of two headers ("a, b") instead of keying on it', () => {
		const rule: KeyRule = { source: 'header', headerName: 'webhook-id' };
		expect(() => deriveKey(webhook('{}', {}, { 'webhook-id': 'msg_A, msg_B' }), rule)).toThrow(
			'header "webhook-id" holds "msg_A, msg_B": it was sent more than once',
		);
		expect(deriveKey(webhook('{}', {}, { 'webhook-id': 'msg_A' }), rule).key).toBe('evt:msg_A');
	});
});

describe('deriveKey: other key sources and scope', () => {
	const item: KeyInput = {
		json: {
			headers: { 'Webhook-Id': 'msg_2Lh', 'x-github-delivery': 'a1b2', 'x-twice': ['1', '2'] },
			body: { data: { object: { id: 'pi_9' } }, items: [{ sku: 'S-1' }] },
		},
	};
	it.each([
		[{ source: 'header', headerName: 'webhook-id' }, 'evt:msg_2Lh', 'header'],
		[{ source: 'header', headerName: 'X-GitHub-Delivery' }, 'evt:a1b2', 'header'],
		[{ source: 'field', fieldPath: 'body.data.object.id' }, 'evt:pi_9', 'field'],
		[{ source: 'field', fieldPath: 'body.items[0].sku' }, 'evt:S-1', 'field'],
		[{ source: 'expression', value: 'order:77' }, 'order:77', 'expression'],
		[{ source: 'expression', value: 77 }, '77', 'expression'],
	] as Array<[KeyRule, string, string]>)('%j → %s', (rule, key, origin) => {
		const derived = deriveKey(item, rule);
		expect(derived.key).toBe(key);
		expect(derived.origin).toBe(origin);
	});

	it.each([
		[{ source: 'header', headerName: 'svix-id' }, /header "svix-id" is missing or empty/],
		[{ source: 'header', headerName: 'x-twice' }, /sent 2 times/],
		[{ source: 'field', fieldPath: 'body.nope' }, /field "body.nope" is missing or empty/],
		[{ source: 'expression', value: '' }, /the key expression is missing or empty/],
		[{ source: 'expression', value: { a: 1 } }, /the key expression is an object/],
	] as Array<[KeyRule, RegExp]>)('%j fails: %s', (rule, message) => {
		expect(() => deriveKey(item, rule)).toThrow(message);
	});

	it('prefixes the scope so two workflows can each process an event once', () => {
		const scoped = (scope: string) => deriveKey(webhook(undefined, { id: 'evt_1' }), AUTO, scope);
		expect(scoped('billing').key).toBe('billing:evt:evt_1');
		expect(() => scoped('has space')).toThrow(/scope/);
	});
});

describe('payload fingerprint', () => {
	it('canonical JSON ignores key order and whitespace; raw bytes do not', () => {
		const a = webhook('{"a":1,"b":2}', { a: 1, b: 2 });
		const b = webhook('{ "b": 2, "a": 1 }', { b: 2, a: 1 });
		expect(payloadFingerprint(a, 'canonicalJson')).toBe(payloadFingerprint(b, 'canonicalJson'));
		expect(payloadFingerprint(a, 'rawBody')).not.toBe(payloadFingerprint(b, 'rawBody'));
		expect(payloadFingerprint(a, 'off')).toBeNull();
		expect(canonicalJson({ z: undefined, y: [null, 'é'] })).toBe('{"y":[null,"é"]}');
	});

	it('keeps the first 128 bits of the SHA-256, in hex', () => {
		const body = '{"id":"evt_1"}';
		const full = createHash('sha256').update(body).digest('hex');
		expect(payloadFingerprint(webhook(body, { id: 'evt_1' }), 'rawBody')).toBe(
			`raw:${full.slice(0, 32)}`,
		);
	});
});
