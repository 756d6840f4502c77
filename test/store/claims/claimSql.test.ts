/**
 * The claim statements as claimSql builds them, sent to a real Postgres: every statement answers
 * claimState's columns (the one-key json array and a batch's typed rows alike), a statement is built once per
 * table and shape, and a table that keeps no events gets statements that never name an event table.
 * A waiting repeat's look answers the same columns.
 */
import { STATE_COLUMNS } from '../../../nodes/Idempotency/store/record/claimState';
import {
	claimStateLookSql,
	claimStatement,
	type ClaimShape,
} from '../../../nodes/Idempotency/store/claims/claimSql';
import { freshClaimTable } from '../../support/testClaimTables';

const SHAPES: ClaimShape[] = (['counting', 'readOnly', 'lease'] as const).flatMap((mode) =>
	[true, false].map((single) => ({ mode, single })),
);

describe('claimStatement', () => {
	it.each(SHAPES)('$mode, single $single: answers claimState’s columns', async (shape) => {
		const table = await freshClaimTable();
		const statement = claimStatement(table, shape);
		const keys = shape.single ? 'evt:a' : ['evt:a', 'evt:b'];
		const values = [keys, null, 'AAAAAAAAAAAAAAAA', null, 60];
		if (shape.mode !== 'lease') values.pop();
		// Twice: the first inserts, the second answers the stored state of every key.
		await table.pool.query(statement.text, values);
		const { rows, fields } = await table.pool.query(statement.text, values);
		if (shape.single) {
			expect(rows).toHaveLength(1);
			expect(rows[0].answer).toHaveLength(
				1 + STATE_COLUMNS.length + (shape.mode === 'readOnly' ? 0 : 1),
			);
		} else {
			expect(fields.map((field) => field.name).slice(0, 1 + STATE_COLUMNS.length)).toEqual([
				'key',
				...STATE_COLUMNS,
			]);
			expect(
				rows
					.filter((row) => row.key !== null)
					.map((row) => row.key)
					.sort(),
			).toEqual(['evt:a', 'evt:b']);
		}
	});

	it('is built once per table and shape: the same named statement every time', async () => {
		const table = await freshClaimTable();
		const shape: ClaimShape = { mode: 'lease', single: true };
		expect(claimStatement(table, shape)).toBe(claimStatement(table, { ...shape }));
		expect(claimStatement(table, { ...shape, keepEvents: true }).name).not.toBe(
			claimStatement(table, shape).name,
		);
	});

	it('names the event table only in a lease statement that keeps events', async () => {
		const table = await freshClaimTable();
		for (const shape of SHAPES) expect(claimStatement(table, shape).text).not.toContain('_events');
		for (const single of [true, false])
			expect(claimStatement(table, { mode: 'lease', single, keepEvents: true }).text).toContain(
				`"${table.ref.table}_events"`,
			);
	});
});

describe('claimStateLookSql', () => {
	it('answers claimState’s columns for each stored key, and whether its lease ran out', async () => {
		const table = await freshClaimTable();
		const lease = claimStatement(table, { mode: 'lease', single: false });
		await table.pool.query(lease.text, [['evt:a', 'evt:b'], null, 'AAAAAAAAAAAAAAAA', null, 60]);
		const look = (clock: Date | null) =>
			table.pool.query(claimStateLookSql(table), [
				['evt:a', 'evt:gone'],
				clock,
				'BBBBBBBBBBBBBBBB',
			]);
		const { rows, fields } = await look(null);
		expect(fields.map((field) => field.name)).toEqual(['key', ...STATE_COLUMNS, 'expired']);
		expect(rows).toEqual([
			expect.objectContaining({ key: 'evt:a', processing: true, mine: false, expired: false }),
		]);
		const later = new Date(Date.now() + 120_000);
		expect((await look(later)).rows).toEqual([expect.objectContaining({ expired: true })]);
	});
});
