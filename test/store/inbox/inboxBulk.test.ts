/** Requeue and Discard of many kept events by a filter, in batches, and the Dry Run's count. */
import {
	countMatchingEvents,
	discardMatchingEvents,
	requeueMatchingEvents,
} from '../../../nodes/Idempotency/store/inbox/inboxBulk';
import { listDeadLetters, retryLater } from '../../../nodes/Idempotency/store/inbox/inbox';
import { eventTableRef } from '../../../nodes/Idempotency/store/inbox/eventTable';
import { rowsOf } from '../../support/claimTableSql';
import { eventKeepingTable, keepEvent, LONG_AGO } from '../../support/keptEvents';
import type { TestClaimTable } from '../../support/testClaimTables';

const BACKOFF = { baseSeconds: 3600, factor: 1, capSeconds: 3600, jitter: 0 };

async function parked(table: TestClaimTable, keys: string[]): Promise<void> {
	for (const key of keys) {
		const { claimId } = await keepEvent(table, key);
		await retryLater(table, [{ key, claimId: claimId!, error: `failed ${key}` }], 1, BACKOFF);
	}
}

async function eventKeys(table: TestClaimTable): Promise<string[]> {
	const { rows } = await table.pool.query<{ key: string }>(
		`SELECT key FROM ${eventTableRef(table.ref).qualified} ORDER BY key`,
	);
	return rows.map((row) => row.key);
}

describe('countMatchingEvents', () => {
	it('counts what the filter matches and changes nothing', async () => {
		const table = await eventKeepingTable();
		await parked(table, ['d1', 'd2']);
		await keepEvent(table, 'due', { now: LONG_AGO });
		expect(await countMatchingEvents(table, { state: 'dead' })).toBe(2);
		expect(await countMatchingEvents(table, { state: 'deadOrDue' })).toBe(3);
		expect((await listDeadLetters(table, 10)).count).toBe(2);
	});
});

describe('requeueMatchingEvents', () => {
	it('puts every matching dead letter back in line, in batches', async () => {
		const table = await eventKeepingTable();
		await parked(table, ['d1', 'd2', 'd3', 'd4', 'd5']);
		await keepEvent(table, 'running');
		const result = await requeueMatchingEvents(table, { state: 'dead' }, 2);
		expect(result).toEqual({ changed: 5, batches: 3 });
		expect((await listDeadLetters(table, 10)).count).toBe(0);
		expect(await countMatchingEvents(table, { state: 'due' })).toBe(5);
		const { rows } = await table.pool.query(
			`SELECT DISTINCT attempts FROM ${eventTableRef(table.ref).qualified} WHERE key LIKE 'd%'`,
		);
		expect(rows).toEqual([{ attempts: 0 }]);
	});

	it('leaves the events the filter does not match', async () => {
		const table = await eventKeepingTable();
		await parked(table, ['d1', 'd2']);
		const result = await requeueMatchingEvents(table, { state: 'dead', errorContains: 'd2' }, 10);
		expect(result).toEqual({ changed: 1, batches: 1 });
		expect((await listDeadLetters(table, 10)).deadLetters.map(({ key }) => key)).toEqual(['d1']);
	});
});

describe('discardMatchingEvents', () => {
	it('drops the matching events and completes their claims; a running event stays', async () => {
		const table = await eventKeepingTable();
		await parked(table, ['d1']);
		await keepEvent(table, 'due', { now: LONG_AGO });
		await keepEvent(table, 'running');
		const result = await discardMatchingEvents(table, { state: 'deadOrDue' }, 10);
		expect(result).toEqual({ changed: 2, batches: 1 });
		expect(await eventKeys(table)).toEqual(['running']);
		const claims = await rowsOf(table.pool, table.ref.qualified);
		const byKey = new Map(claims.map((row) => [row.key, row]));
		for (const key of ['d1', 'due'])
			expect(byKey.get(key)).toMatchObject({ lease_until: null, claim_token: null });
		// A later delivery of a discarded key is a duplicate of completed work.
		const [repeat] = await table.claim(['due'], { mode: 'lease' });
		expect(repeat).toMatchObject({ won: false, duplicateKind: 'completed' });
	});
});
