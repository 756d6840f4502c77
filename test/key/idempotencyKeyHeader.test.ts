import { deriveKey } from '../../nodes/Idempotency/key/deriveKey';
import { presetKeyRule } from '../../nodes/Idempotency/key/providerPresets';
import { parseStructuredString } from '../../nodes/Idempotency/key/structuredString';

const rule = presetKeyRule('idempotencyKey');
const keyOf = (value: unknown) =>
	deriveKey({ json: { headers: { 'idempotency-key': value }, body: {} } }, rule).key;

describe('the Idempotency-Key preset (an RFC 8941 string, or the bare value clients send)', () => {
	it('keys the quoted form and the bare form of one value alike', () => {
		expect(keyOf('"8e03978e-40d5-43e8"')).toBe('evt:8e03978e-40d5-43e8');
		expect(keyOf('8e03978e-40d5-43e8')).toBe('evt:8e03978e-40d5-43e8');
	});

	it('reads escapes and keeps ", " inside a quoted value (one string, not a repeated header)', () => {
		expect(keyOf('"say \\"hi\\", then \\\\ go"')).toBe('evt:say "hi", then \\ go');
	});

	it('keys a string with parameters by the string alone (RFC 8941 Item; draft-07 asks only for a String)', () => {
		expect(keyOf('"k";client=42')).toBe('evt:k');
		expect(keyOf('"k"; a; b=?0;c="x, y"')).toBe('evt:k');
	});

	it.each([
		['a header sent twice, joined by Node', '"k1", "k2"'],
		['a header with parameters sent twice', '"k1";a=1, "k2"'],
		['a space before a parameter', '"k" ;client=42'],
		['a parameter key in capitals', '"k";Client=42'],
		['an unknown escape', '"a\\nb"'],
		['no closing quote', '"abc'],
		['text after the string', '"abc"x'],
		['a character outside printable ASCII', '"café"'],
	])('refuses %s, naming the header', (_, value) => {
		expect(() => keyOf(value)).toThrow(
			/^header "Idempotency-Key" holds .*not one Structured Field string/,
		);
	});

	it('refuses a bare value sent twice, and a missing or empty one', () => {
		expect(() => keyOf('k1, k2')).toThrow(/sent more than once/);
		expect(() => keyOf(undefined)).toThrow(/^no key: header "Idempotency-Key" is missing or empty/);
		expect(() => keyOf('""')).toThrow(/^no key: header "Idempotency-Key" is missing or empty/);
	});

	it('parses exactly one string', () => {
		expect(parseStructuredString('""')).toBe('');
		expect(parseStructuredString('"a"')).toBe('a');
		expect(parseStructuredString('a')).toBeUndefined();
		expect(parseStructuredString('"a\\')).toBeUndefined();
	});
});

// structured-headers names its entry points only in "exports", which TypeScript's node10 resolution (this
// repo's) does not read; Jest does, and loads its CommonJS build.
type StructuredHeaders = typeof import('structured-headers/dist/index');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseItem } = require('structured-headers') as StructuredHeaders;

/** What a well-kept RFC 8941/9651 parser reads: the String the Item is, or undefined for any other item or an error. */
function oracle(text: string): string | undefined {
	try {
		const [value] = parseItem(text);
		return typeof value === 'string' ? value : undefined;
	} catch {
		return undefined;
	}
}

describe('parseStructuredString agrees with the structured-headers package', () => {
	// A String, alone or with parameters of every kind of bare item.
	it.each([
		'"k"',
		'""',
		' "k"  ',
		'"say \\"hi\\", \\\\ go"',
		'"k";client=42',
		'"k";a',
		'"k";a;b=?0;c=?1',
		'"k"; a=1;  b=2',
		'"k";a=-12.345',
		'"k";a=123456789012.123',
		'"k";a=123456789012345',
		'"k";*a_b-c.d*=x',
		'"k";a="x, y"',
		'"k";a=tok/en:x',
		'"k";a=:YQ==:',
		'"k";a=:YQ:',
		'"k";a=::',
		'"k";a=1;a=2',
		'"k";a=@1659578233',
		'"k";a=%"caf%c3%a9"',
	])('reads %s as the String', (text) => {
		expect(oracle(text)).toBeDefined();
		expect(parseStructuredString(text)).toBe(oracle(text));
	});

	// A list, another kind of item, a malformed string or parameter.
	it.each([
		'"a", "b"',
		'"k",',
		'k;a=1',
		'42;a=1',
		':YQ==:',
		'"k" ;a',
		'\t"k"',
		'"k"\t',
		'"k"x',
		'"k";',
		'"k"; ;a',
		'"k";A=1',
		'"k";1a=1',
		'"k";=1',
		'"k";a=',
		'"k";a=-',
		'"k";a=1234567890123456',
		'"k";a=1234567890123.1',
		'"k";a=1.2345',
		'"k";a=1.',
		'"k";a=1.2.3',
		'"k";a=?2',
		'"k";a="x',
		'"k";a=:a:',
		'"k";a=:a*b:',
		'"k";a=:abc',
		'"k";a=@1.5',
		'"k";a=%"%C3%A9"',
		'"k";a=%"%c3%28"',
		'"café"',
		'"a\\nb"',
	])('refuses %s', (text) => {
		expect(oracle(text)).toBeUndefined();
		expect(parseStructuredString(text)).toBeUndefined();
	});
});
