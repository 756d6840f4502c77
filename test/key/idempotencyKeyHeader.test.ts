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

	it.each([
		['a header sent twice, joined by Node', '"k1", "k2"'],
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
