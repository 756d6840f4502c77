/**
 * The Key node's Purge keeps the limit tables from growing with keys no longer used: it deletes the slot
 * rows of keys free since before its cutoff and the rate rows whose starts all left their window before it,
 * and never a slot whose lease runs or a start that still counts. Through the nodes' own execute() on real
 * Postgres; time is the database's clock, moved by the test.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { executeContext } from '../../../harness/node/executeContext';
import { IdempotencyLimit } from '../../../nodes/Idempotency/IdempotencyLimit.node';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';
import { databaseClock } from '../../support/databaseClock';
import { claim, delivery, keyOperation } from '../../support/inboxNodes';

const clock = databaseClock();
const node = new IdempotencyLimit();
const credentials = testCredentials({ maxConnections: 4 });
const pool = testPool(2);
afterAll(() => pool.end());
const DAY = 86_400;

function limit(
	operation: string,
	table: string,
	item: INodeExecutionData,
	parameters: IDataObject,
) {
	const context = executeContext([item], {
		parameters: {
			operation,
			maxAtOnce: 2,
			whenNoSlot: 'leave',
			maxWaitSeconds: 10,
			...parameters,
			options: { table },
		},
		perItem: (name) =>
			name === 'limitKey'
				? item.json.customer
				: name === 'slotId'
					? ((item.json.idempotency as IDataObject).slot as IDataObject).slotId
					: undefined,
		credentials,
		nodeType: 'idempotencyLimit',
		nodeName: 'Idempotency Limit',
	});
	return node.execute.call(context);
}

const take = async (table: string, customer: string, leaseSeconds = 300) =>
	(await limit('takeSlot', table, { json: { customer } }, { slotLeaseSeconds: leaseSeconds }))[0];
const free = (table: string, item: INodeExecutionData) => limit('freeSlot', table, item, {});
const checkRate = async (table: string, customer: string, windowSeconds: number) =>
	limit('checkRate', table, { json: { customer } }, { maxStarts: 1, windowSeconds });

async function keysIn(table: string): Promise<string[]> {
	const { rows } = await pool.query<{ key: string }>(
		`SELECT DISTINCT key FROM ${table} ORDER BY key`,
	);
	return rows.map((row) => row.key);
}

async function purge(table: string, olderThanDays: number) {
	const [[report]] = await keyOperation('purge', [], table, { olderThanDays, batchSize: 2 });
	return report.json.limitRowsDeleted;
}

describe('Purge and the limit tables', () => {
	it('deletes the slots of keys free longer than Older Than, keeps every slot whose lease runs, and a purged key takes slots again', async () => {
		const table = uniqueTableName('purge_limits');
		await claim([delivery('evt_1')], table, { keepEvent: false });
		// 40 days ago: "gone" took and freed a slot; "dead" took one and never freed it (a 60 s lease);
		// "busy" took one with a lease of 60 days, still running.
		const [gone] = await take(table, 'gone');
		await free(table, gone);
		await take(table, 'dead', 60);
		await take(table, 'busy', 60 * DAY);
		await clock.advance(40 * DAY);
		// Now: "fresh" freed a slot a moment ago.
		const [fresh] = await take(table, 'fresh');
		await free(table, fresh);

		// Gone's and dead's slots, and busy's slot 2 (made free 40 days ago, never taken).
		expect(await purge(table, 30)).toEqual({ slots: 5, rates: 0 });
		expect(await keysIn(`${table}_slots`)).toEqual(['busy', 'fresh']);
		// Busy's held slot is still held: of two takers, one gets the other slot, one gets none.
		const busy = await Promise.all([take(table, 'busy'), take(table, 'busy')]);
		expect(busy.flat()).toHaveLength(1);
		// A purged key starts again from free slots: two takers, two slots.
		const gone2 = await Promise.all([take(table, 'gone'), take(table, 'gone')]);
		expect(gone2.flat()).toHaveLength(2);
		// Older Than 0: only what is free right now goes; a held slot never.
		await purge(table, 0);
		expect(await keysIn(`${table}_slots`)).toEqual(['busy', 'gone']);
	});

	it('deletes a rate row only once its starts left their window before the cutoff: a start that still counts is kept and still limits', async () => {
		const table = uniqueTableName('purge_rates');
		await claim([delivery('evt_1')], table, { keepEvent: false });
		// 40 days ago: a start under a 10 s window, and one under a 60-day window (still counting).
		await checkRate(table, 'short', 10);
		await checkRate(table, 'long', 60 * DAY);
		await clock.advance(40 * DAY);
		await checkRate(table, 'now', 10);

		expect(await purge(table, 30)).toEqual({ slots: 0, rates: 1 });
		expect(await keysIn(`${table}_rates`)).toEqual(['long', 'now']);
		// The long window's start still limits: R = 1, a second start is refused.
		const [allowed, limited] = await checkRate(table, 'long', 60 * DAY);
		expect([allowed.length, limited.length]).toEqual([0, 1]);
		// Older Than 0: the 10 s start of "now" still counts for a few seconds, so it stays…
		expect(await purge(table, 0)).toEqual({ slots: 0, rates: 0 });
		// …and goes once it has left its window.
		await clock.advance(11);
		expect(await purge(table, 0)).toEqual({ slots: 0, rates: 1 });
		expect(await keysIn(`${table}_rates`)).toEqual(['long']);
	});

	it('purges a claim table whose limits were never used, and says it deleted no limit rows', async () => {
		const table = uniqueTableName('purge_none');
		await claim([delivery('evt_1')], table, { keepEvent: false });
		expect(await purge(table, 30)).toEqual({ slots: 0, rates: 0 });
	});
});
