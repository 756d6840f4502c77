/** The event table beside a claim table: its name, its DDL, deleting claims with their events. */
import { TableError } from '../../../nodes/Idempotency/errors';
import {
	createEventTableSql,
	deleteWithEvents,
	eventTableRef,
	scopeColumnMissing,
} from '../../../nodes/Idempotency/store/inbox/eventTable';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { rowsOf } from '../../support/claimTableSql';
import { testCredentials, uniqueTableName } from '../../support/database';
import { eventKeepingTable, keepEvent } from '../../support/keptEvents';
import { freshClaimTable } from '../../support/testClaimTables';

describe('eventTableRef', () => {
	it("is <table>_events in the claim table's schema, quoted", () => {
		expect(eventTableRef(tableRef('app', 'processed_events'))).toEqual({
			schema: 'app',
			table: 'processed_events_events',
			qualified: '"app"."processed_events_events"',
		});
	});

	it('keeps a long name within 63 bytes, and two long names with one prefix apart', () => {
		const long = (end: string) => eventTableRef(tableRef('public', `${'t'.repeat(58)}${end}`));
		const [a, b] = [long('a1'), long('b2')];
		expect(Buffer.byteLength(a.table)).toBeLessThanOrEqual(63);
		expect(a.table).not.toBe(b.table);
	});
});

describe('createEventTableSql', () => {
	it('makes the table the inbox writes, once, and again without error', async () => {
		const pool = await poolFor(testCredentials());
		const ref = eventTableRef(tableRef('public', uniqueTableName('ddl')));
		await pool.query(createEventTableSql(ref));
		await pool.query(createEventTableSql(ref));
		const { rows } = await pool.query<{ column_name: string }>(
			'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
			[ref.schema, ref.table],
		);
		expect(rows.map((row) => row.column_name)).toEqual([
			'received_at',
			'dead_at',
			'attempts',
			'key',
			'content_type',
			'last_error',
			'headers',
			'scope',
			'body',
		]);
	});
});

describe('deleteWithEvents', () => {
	it('deletes the listed claims and their events in one statement, answering a row per claim', async () => {
		const table = await eventKeepingTable();
		for (const key of ['a', 'b', 'c']) await keepEvent(table, key);
		const sql = `WITH doomed AS (SELECT key FROM ${table.ref.qualified} WHERE key <> 'b') ${deleteWithEvents(table, 'doomed')}`;
		const { rows } = await table.pool.query<{ key: string }>(sql);
		expect(rows.map((row) => row.key).sort()).toEqual(['a', 'c']);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual(['b']);
		const events = await table.pool.query(`SELECT key FROM ${eventTableRef(table.ref).qualified}`);
		expect(events.rows).toEqual([{ key: 'b' }]);
	});

	it('on a table that keeps no events, deletes the claims alone', async () => {
		const table = await freshClaimTable();
		await table.claim(['a', 'b']);
		const sql = `WITH doomed AS (SELECT key FROM ${table.ref.qualified} WHERE key = 'a') ${deleteWithEvents(table, 'doomed')}`;
		expect((await table.pool.query(sql)).rowCount).toBe(1);
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual(['b']);
	});
});

describe('scopeColumnMissing', () => {
	it('is a TableError naming the event table and the statement its owner runs', () => {
		const error = scopeColumnMissing(tableRef('app', 'claims'));
		expect(error).toBeInstanceOf(TableError);
		expect(error.message).toMatch(
			/^app\.claims_events has no scope column.*ALTER TABLE "app"\."claims_events" ADD COLUMN scope text/,
		);
	});
});
