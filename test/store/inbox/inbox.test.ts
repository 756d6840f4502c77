/**
 * The inbox's own functions on real tables: Retry Later, Take Due Events, parking, Requeue and the dead
 * letters' list, each asserted by what it answers and what the claim and event rows are afterwards. A due
 * event is one kept by a claim made at a clock long past, so nothing waits for time to pass.
 */
import {
	listDeadLetters,
	parkHeldEvents,
	requeueEvents,
	retryLater,
	takeDueEvents,
	type Backoff,
	type DueEventQuery,
} from '../../../nodes/Idempotency/store/inbox/inbox';
import { eventTableRef } from '../../../nodes/Idempotency/store/inbox/eventTable';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { eventKeepingTable, keepEvent, LONG_AGO } from '../../support/keptEvents';
import type { TestClaimTable } from '../../support/testClaimTables';

const HOUR: Backoff = { baseSeconds: 3600, factor: 2, capSeconds: 86400, jitter: 0 };

async function eventRow(table: TestClaimTable, key: string) {
	const { rows } = await table.pool.query(
		`SELECT attempts, dead_at, last_error, scope FROM ${eventTableRef(table.ref).qualified} WHERE key = $1`,
		[key],
	);
	return rows[0];
}

async function leaseOf(table: TestClaimTable, key: string): Promise<Date | null> {
	const { rows } = await table.pool.query(
		`SELECT lease_until FROM ${table.ref.qualified} WHERE key = $1`,
		[key],
	);
	return rows[0].lease_until;
}

async function databaseNow(table: TestClaimTable): Promise<number> {
	return (await table.pool.query('SELECT now() AS now')).rows[0].now.getTime();
}

const take = (table: TestClaimTable, query: Partial<DueEventQuery> = {}) =>
	takeDueEvents(table, {
		limit: 100,
		leaseSeconds: 600,
		maxAttempts: 5,
		claimId: newClaimId(),
		scope: null,
		...query,
	});

describe('retryLater', () => {
	it("records the holder's failure and makes the event due after the backoff", async () => {
		const table = await eventKeepingTable();
		const { claimId } = await keepEvent(table, 'a');
		const before = await databaseNow(table);
		const [result] = await retryLater(
			table,
			[{ key: 'a', claimId: claimId!, error: 'boom' }],
			5,
			HOUR,
		);
		expect(result).toMatchObject({ state: 'scheduled', attempts: 1 });
		const dueIn = result.dueAt!.getTime() - before;
		expect(dueIn).toBeGreaterThanOrEqual(3600_000 - 1000);
		expect(dueIn).toBeLessThan(3600_000 + 60_000);
		expect(await leaseOf(table, 'a')).toEqual(result.dueAt);
		expect(await eventRow(table, 'a')).toMatchObject({
			attempts: 1,
			dead_at: null,
			last_error: 'boom',
		});
	});

	it('parks the event once it has run Max Attempts times: its lease never ends', async () => {
		const table = await eventKeepingTable();
		const { claimId } = await keepEvent(table, 'a');
		const [result] = await retryLater(
			table,
			[{ key: 'a', claimId: claimId!, error: 'again' }],
			1,
			HOUR,
		);
		expect(result).toEqual({ state: 'dead_letter', attempts: 1, dueAt: null });
		expect((await leaseOf(table, 'a'))!.valueOf()).toBe(Infinity);
		const row = await eventRow(table, 'a');
		expect(row.dead_at).toBeInstanceOf(Date);
		expect(row.last_error).toBe('again');
	});

	it('does nothing for a claim it does not hold, and says when a held claim keeps no event', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'held');
		const [plain] = await table.claim(['plain'], { mode: 'lease', leaseSeconds: 3600 });
		const results = await retryLater(
			table,
			[
				{ key: 'held', claimId: newClaimId(), error: 'x' },
				{ key: 'plain', claimId: plain.claimId!, error: 'x' },
				{ key: 'missing', claimId: newClaimId(), error: 'x' },
			],
			5,
			HOUR,
		);
		expect(results.map(({ state }) => state)).toEqual(['not_held', 'no_event', 'not_held']);
		expect(await eventRow(table, 'held')).toMatchObject({ last_error: null });
	});
});

describe('takeDueEvents', () => {
	it('takes the due events of its scope with a new lease and claim ID, counting the run; running ones stay', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'due', { now: LONG_AGO, body: '{"n":1}' });
		await keepEvent(table, 'running');
		await keepEvent(table, 'other-scope', { now: LONG_AGO, scope: 'github' });
		const claimId = newClaimId();
		const before = await databaseNow(table);
		const { taken, parked } = await take(table, { claimId, leaseSeconds: 600 });
		expect(parked).toBe(0);
		expect(taken.map(({ key }) => key)).toEqual(['due']);
		const [event] = taken;
		expect(event).toMatchObject({
			attempts: 2,
			contentType: 'application/json',
			headers: { 'x-event': 'due' },
			lastError: null,
		});
		expect(event.body.toString()).toBe('{"n":1}');
		expect(event.leaseUntil.getTime() - before).toBeGreaterThanOrEqual(600_000 - 1000);
		// The taker holds it now: its Retry Later is the one that counts.
		const [retried] = await retryLater(table, [{ key: 'due', claimId, error: 'x' }], 5, HOUR);
		expect(retried.state).toBe('scheduled');
	});

	it("takes one scope's events only, at most `limit` of them", async () => {
		const table = await eventKeepingTable();
		for (const key of ['g1', 'g2', 'g3'])
			await keepEvent(table, key, { now: LONG_AGO, scope: 'github' });
		await keepEvent(table, 'unscoped', { now: LONG_AGO });
		const first = await take(table, { scope: 'github', limit: 2 });
		expect(first.taken).toHaveLength(2);
		const rest = await take(table, { scope: 'github' });
		expect(rest.taken).toHaveLength(1);
		expect(new Set([...first.taken, ...rest.taken].map(({ key }) => key))).toEqual(
			new Set(['g1', 'g2', 'g3']),
		);
	});

	it('gives back, as they are, the events this claim ID holds already (its answer was lost)', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'a', { now: LONG_AGO });
		const claimId = newClaimId();
		const [first] = (await take(table, { claimId })).taken;
		const [again] = (await take(table, { claimId })).taken;
		expect(again).toMatchObject({ key: 'a', attempts: first.attempts });
		expect(again.leaseUntil).toEqual(first.leaseUntil);
	});

	it('parks an event whose last allowed run died, instead of running it again', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'a', { now: LONG_AGO });
		const { taken, parked } = await take(table, { maxAttempts: 1 });
		expect(taken).toEqual([]);
		expect(parked).toBe(1);
		expect((await eventRow(table, 'a')).last_error).toMatch(
			/ended without Complete or Retry Later/,
		);
	});
});

describe('parkHeldEvents, listDeadLetters and requeueEvents', () => {
	it('parks the events its claim ID holds with their reasons; the list shows them oldest first', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'a', { now: LONG_AGO });
		await keepEvent(table, 'b', { now: LONG_AGO });
		await keepEvent(table, 'not-taken');
		const claimId = newClaimId();
		await take(table, { claimId });
		const parked = await parkHeldEvents(table, claimId, [
			{ key: 'a', reason: 'unreadable body' },
			{ key: 'not-taken', reason: 'not held' },
		]);
		expect(parked).toEqual(['a']);
		const { deadLetters, count } = await listDeadLetters(table, 10);
		expect(count).toBe(1);
		expect(deadLetters).toEqual([
			{
				key: 'a',
				attempts: 2,
				lastError: 'unreadable body',
				deadAt: expect.any(Date),
				receivedAt: expect.any(Date),
			},
		]);
	});

	it('the list counts every dead letter and returns at most `limit`', async () => {
		const table = await eventKeepingTable();
		for (const key of ['a', 'b', 'c']) {
			const { claimId } = await keepEvent(table, key);
			await retryLater(table, [{ key, claimId: claimId!, error: key }], 1, HOUR);
		}
		const { deadLetters, count } = await listDeadLetters(table, 2);
		expect(count).toBe(3);
		expect(deadLetters.map(({ key }) => key)).toEqual(['a', 'b']);
	});

	it('requeues dead letters only: due at once, attempts counted afresh', async () => {
		const table = await eventKeepingTable();
		const { claimId } = await keepEvent(table, 'dead');
		await retryLater(table, [{ key: 'dead', claimId: claimId!, error: 'x' }], 1, HOUR);
		await keepEvent(table, 'running');
		expect(await requeueEvents(table, ['running', 'dead', 'missing'])).toEqual(['dead']);
		expect(await eventRow(table, 'dead')).toMatchObject({ attempts: 0, dead_at: null });
		expect((await listDeadLetters(table, 10)).count).toBe(0);
		const { taken } = await take(table);
		expect(taken.map(({ key, attempts }) => [key, attempts])).toEqual([['dead', 1]]);
	});
});
