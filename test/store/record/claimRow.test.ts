/**
 * A claim row's columns, listed once: the parts an operation asks a table for, and the DDL of a new
 * table made of exactly the compact layout's columns in their compact types.
 */
import { CLAIM_COLUMNS, claimColumnsOf } from '../../../nodes/Idempotency/store/record/claimRow';
import { createTableSql } from '../../../nodes/Idempotency/store/table/tableSchema';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';

describe('claimColumnsOf', () => {
	it('names the columns of each part, in the order a table made earlier is given them', () => {
		expect(claimColumnsOf('required')).toEqual(['key', 'first_seen']);
		expect(claimColumnsOf('counters', 'leases', 'fingerprint')).toEqual([
			'last_seen',
			'deliveries',
			'status',
			'lease_until',
			'claim_token',
			'fingerprint',
		]);
		expect(claimColumnsOf('leases')).toEqual(['status', 'lease_until', 'claim_token']);
		expect(claimColumnsOf('responses')).toEqual(['response']);
	});
});

describe('CLAIM_COLUMNS', () => {
	it('a new table has every column with a compact type, in that type, and no other', () => {
		const [create] = createTableSql(tableRef('app', 'claims'));
		const declared = create
			.slice(create.indexOf('(') + 1, -1)
			.split(', ')
			.map((column) => column.split(' ')[0]);
		const compact = Object.entries(CLAIM_COLUMNS).filter(([, column]) => column.compact !== null);
		expect([...declared].sort()).toEqual(compact.map(([name]) => name).sort());
		for (const [name, column] of compact) expect(create).toContain(`${name} ${column.compact}`);
	});
});
