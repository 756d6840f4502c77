/** summarizeInbox on a real inbox: each scope's events by state, with their ages. */
import { retryLater } from '../../../nodes/Idempotency/store/inbox/inbox';
import { emptyScope, summarizeInbox } from '../../../nodes/Idempotency/store/inbox/inboxSummary';
import { eventKeepingTable, keepEvent, LONG_AGO } from '../../support/keptEvents';

const BACKOFF = { baseSeconds: 3600, factor: 1, capSeconds: 3600, jitter: 0 };

describe('summarizeInbox', () => {
	it('an empty inbox is the unscoped scope with zeros', async () => {
		const table = await eventKeepingTable();
		const summary = await summarizeInbox(table);
		expect(summary.scopes).toEqual([emptyScope(null)]);
		expect(summary.now).toBeInstanceOf(Date);
	});

	it('counts each scope by state, unscoped first, with how long the due have waited', async () => {
		const table = await eventKeepingTable();
		await keepEvent(table, 'due-1', { now: LONG_AGO, leaseSeconds: 60 });
		await keepEvent(table, 'due-2', { now: LONG_AGO, leaseSeconds: 60 });
		await keepEvent(table, 'running');
		const scheduled = await keepEvent(table, 'scheduled', { scope: 'github' });
		await retryLater(
			table,
			[{ key: 'scheduled', claimId: scheduled.claimId!, error: 'x' }],
			5,
			BACKOFF,
		);
		const dead = await keepEvent(table, 'dead', { scope: 'github' });
		await retryLater(table, [{ key: 'dead', claimId: dead.claimId!, error: 'x' }], 1, BACKOFF);
		const { scopes, now } = await summarizeInbox(table);
		expect(scopes.map((scope) => scope.scope)).toEqual([null, 'github']);
		const [unscoped, github] = scopes;
		expect(unscoped.due.count).toBe(2);
		// Due since their lease ended, in 2000.
		const sinceLongAgo = (now.getTime() - LONG_AGO.getTime()) / 1000;
		expect(unscoped.due.lagSeconds).toBeGreaterThan(sinceLongAgo - 3600);
		expect(unscoped.running).toEqual({ count: 1, oldestSeconds: expect.any(Number) });
		expect(unscoped.scheduled.count).toBe(0);
		expect(unscoped.dead.count).toBe(0);
		expect(github.scheduled.count).toBe(1);
		expect(github.dead).toEqual({
			count: 1,
			oldestSeconds: expect.any(Number),
			longestParkedSeconds: expect.any(Number),
		});
		expect(github.due).toEqual(emptyScope('github').due);
	});
});
