/**
 * The filter of the bulk operations, run as the bulk operations run it (kept events beside their claims'
 * leases): which kept events each condition picks, with every typed value a parameter.
 */
import {
	eventFilterSql,
	keptEventsSql,
	type EventFilter,
} from '../../../nodes/Idempotency/store/inbox/inboxFilter';
import { retryLater } from '../../../nodes/Idempotency/store/inbox/inbox';
import { completeClaims } from '../../../nodes/Idempotency/store/claims/settleKeys';
import { eventKeepingTable, keepEvent, LONG_AGO } from '../../support/keptEvents';
import type { TestClaimTable } from '../../support/testClaimTables';

const BACKOFF = { baseSeconds: 3600, factor: 1, capSeconds: 3600, jitter: 0 };

async function matching(table: TestClaimTable, filter: EventFilter): Promise<string[]> {
	const values: unknown[] = [];
	const where = eventFilterSql(table, filter, values);
	const { rows } = await table.pool.query<{ key: string }>(
		`SELECT v.key FROM ${keptEventsSql(table)} WHERE ${where} ORDER BY v.key`,
		values,
	);
	return rows.map((row) => row.key);
}

/** due (lease ended), running, scheduled (Retry Later), dead (two, one in scope "github"), completed. */
async function inboxOfEveryState(): Promise<TestClaimTable> {
	const table = await eventKeepingTable();
	await keepEvent(table, 'due', { now: LONG_AGO });
	await keepEvent(table, 'running');
	const scheduled = await keepEvent(table, 'scheduled');
	await retryLater(
		table,
		[{ key: 'scheduled', claimId: scheduled.claimId!, error: 'later' }],
		5,
		BACKOFF,
	);
	for (const [key, scope, error] of [
		['dead-1', null, 'HTTP 500 from 100%_api'],
		['dead-2', 'github', 'timeout'],
	] as const) {
		const { claimId } = await keepEvent(table, key, { scope });
		await retryLater(table, [{ key, claimId: claimId!, error }], 1, BACKOFF);
	}
	const done = await keepEvent(table, 'completed');
	await completeClaims(table, [{ key: 'completed', claimId: done.claimId! }]);
	return table;
}

describe('eventFilterSql over keptEventsSql', () => {
	let table: TestClaimTable;
	beforeAll(async () => {
		table = await inboxOfEveryState();
	});

	it('picks dead letters, due events, or both, and never a running or scheduled one', async () => {
		expect(await matching(table, { state: 'dead' })).toEqual(['dead-1', 'dead-2']);
		expect(await matching(table, { state: 'due' })).toEqual(['due']);
		expect(await matching(table, { state: 'deadOrDue' })).toEqual(['dead-1', 'dead-2', 'due']);
	});

	it('narrows by scope, and by the last error as plain text in any case', async () => {
		expect(await matching(table, { state: 'dead', scope: 'github' })).toEqual(['dead-2']);
		expect(await matching(table, { state: 'dead', errorContains: '100%_API' })).toEqual(['dead-1']);
		expect(await matching(table, { state: 'dead', errorContains: '100__api' })).toEqual([]);
	});

	it('narrows by attempts and by when events were received or parked', async () => {
		expect(await matching(table, { state: 'dead', attemptsAtLeast: 2 })).toEqual([]);
		expect(await matching(table, { state: 'dead', attemptsAtMost: 1 })).toEqual([
			'dead-1',
			'dead-2',
		]);
		const future = '2999-01-01T00:00:00Z';
		expect(await matching(table, { state: 'deadOrDue', receivedBefore: future })).toHaveLength(3);
		expect(await matching(table, { state: 'deadOrDue', receivedFrom: future })).toEqual([]);
		expect(await matching(table, { state: 'dead', parkedBefore: future })).toHaveLength(2);
		expect(await matching(table, { state: 'dead', parkedFrom: future })).toEqual([]);
		// A due event was never parked: a parked-time condition never picks it.
		expect(await matching(table, { state: 'due', parkedBefore: future })).toEqual([]);
	});

	it('appends each value it uses to the parameters, never into the text', () => {
		const values: unknown[] = ['already there'];
		const sql = eventFilterSql(
			table,
			{ state: 'dead', scope: "x'; DROP TABLE y; --", errorContains: 'e', attemptsAtLeast: 3 },
			values,
		);
		expect(values).toEqual(['already there', "x'; DROP TABLE y; --", 'e', 3]);
		expect(sql).not.toContain('DROP');
		expect(sql).toContain('$2');
	});
});
