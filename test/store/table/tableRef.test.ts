/** tableRef: a schema and table name validated once, so they can be spliced into SQL quoted. */
import { TableError } from '../../../nodes/Idempotency/errors';
import {
	quoteIdentifier,
	suffixedIdentifier,
	tableRef,
} from '../../../nodes/Idempotency/store/table/tableRef';

describe('tableRef', () => {
	it('quotes a plain name and names its purge index', () => {
		expect(tableRef('app', 'processed_events')).toEqual({
			schema: 'app',
			table: 'processed_events',
			qualified: '"app"."processed_events"',
			firstSeenIndex: '"processed_events_first_seen_idx"',
		});
	});

	it('trims the spaces around a name', () => {
		expect(tableRef(' public ', ' claims ').qualified).toBe('"public"."claims"');
	});

	it.each([
		['processed_events; DROP TABLE business_log', 'Table'],
		['"quoted"', 'Table'],
		['two words', 'Table'],
		['1starts_with_digit', 'Table'],
		['', 'Table'],
		['t'.repeat(64), 'Table'],
	])('refuses the table name %p, naming it, before any SQL', (name, label) => {
		expect(() => tableRef('public', name)).toThrow(TableError);
		expect(() => tableRef('public', name)).toThrow(
			`${label} name "${name}" is not allowed: use 1–63 letters, digits or underscores, starting with a letter or underscore`,
		);
	});

	it('refuses a schema name as it refuses a table name', () => {
		expect(() => tableRef('app.x', 'claims')).toThrow('Schema name "app.x" is not allowed');
	});
});

describe('suffixedIdentifier', () => {
	it('adds the suffix to a name that stays within 63 bytes', () => {
		expect(suffixedIdentifier('claims', '_events')).toBe('claims_events');
	});

	it('cuts a long name and adds a hash of it: within 63 bytes, and apart from its neighbours', () => {
		const a = suffixedIdentifier(`${'x'.repeat(60)}_a`, '_first_seen_idx');
		const b = suffixedIdentifier(`${'x'.repeat(60)}_b`, '_first_seen_idx');
		expect(a).toHaveLength(63);
		expect(a.endsWith('_first_seen_idx')).toBe(true);
		expect(a).not.toBe(b);
		expect(suffixedIdentifier(`${'x'.repeat(60)}_a`, '_first_seen_idx')).toBe(a);
	});
});

describe('quoteIdentifier', () => {
	it('quotes, doubling any quote inside', () => {
		expect(quoteIdentifier('plain')).toBe('"plain"');
		expect(quoteIdentifier('a"b')).toBe('"a""b"');
	});
});
