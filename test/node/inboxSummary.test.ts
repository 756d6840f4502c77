/**
 * Summarize Inbox through the Idempotency Key node on real Postgres: kept events counted by scope and state
 * (due, running, scheduled, dead) with the age of the oldest of each, keys made without a Scope under
 * scope null whatever their prefix. Time is moved by moving the database's clock (databaseClock): events
 * are kept, parked and made due at times the test chooses, then summarised at the present.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, uniqueTableName } from '../support/database';
import { databaseClock } from '../support/databaseClock';

const clock = databaseClock();

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

/** Claim With Lease keeping each event (a body without an id is keyed by its bytes, `sha256:`). */
async function keep(
	table: string,
	bodies: object[],
	options: IDataObject = {},
	keepEvent = true,
	leaseSeconds = 300,
): Promise<INodeExecutionData[]> {
	const [created] = await claimNode.execute.call(
		executeContext(
			bodies.map((body) => webhookItem(JSON.stringify(body))),
			{
				parameters: {
					keySource: 'auto',
					claimMode: 'lease',
					leaseSeconds,
					keepEvent,
					options: { table, ...options },
				},
				credentials: testCredentials(),
			},
		),
	);
	return created;
}

function keyOperation(operation: string, items: INodeExecutionData[], table: string, extra = {}) {
	return keyNode.execute.call(
		executeContext(items.length > 0 ? items : [{ json: {} }], {
			parameters: { operation, options: { table }, ...extra },
			perItem: (name, index) => {
				const result = (items[index]?.json.idempotency ?? {}) as IDataObject;
				return name === 'key' ? result.key : name === 'claimId' ? result.claimId : undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
		}),
	);
}

const summary = async (table: string) =>
	(await keyOperation('inboxSummary', [], table))[0].map((item) => item.json);
const keysOf = (items: INodeExecutionData[]) =>
	items.map((item) => (item.json.idempotency as IDataObject).key as string);
const retryLater = (items: INodeExecutionData[], table: string, maxAttempts = 8) =>
	keyOperation('retryLater', items, table, {
		errorMessage: 'the shipping API answered 502',
		maxAttempts,
		backoff: { baseSeconds: 600, jitter: 0 },
	});

const none = { count: 0, oldestSeconds: null };

/** Seconds set `ago` by the test, as read a little later: at least that, and not a minute more. */
const secondsAgo = (ago: number) => ({
	asymmetricMatch: (seconds: unknown) =>
		typeof seconds === 'number' && seconds >= ago && seconds < ago + 60,
	toString: () => `about ${ago} s`,
});

it('counts each scope’s events by state, with the oldest age of each; keys without a Scope are scope null', async () => {
	const table = uniqueTableName('summary');
	const HOUR = 3_600;
	// A day ago an orders event came in; it was parked 3 hours ago (its lease ran until then).
	await clock.advance(-24 * HOUR);
	const dead = await keep(table, [{ id: 'o1' }], { scope: 'orders' }, true, 22 * HOUR);
	await clock.advance(21 * HOUR);
	await retryLater(dead, table, 1);
	// 2 hours ago evt:due1 came in, its lease ending 10 minutes ago; 6 minutes ago evt:due2, ending a minute ago.
	await clock.advance(HOUR);
	await keep(table, [{ id: 'due1' }], {}, true, 2 * HOUR - 600);
	await clock.advance(2 * HOUR - 360);
	await keep(table, [{ id: 'due2' }]);
	await clock.advance(360);
	// Now, without a Scope: evt:<id> and sha256:<hash of the bytes>.
	const running = await keep(table, [{ id: 'run1' }, { note: 'no id' }]);
	const orders = await keep(table, [{ id: 'o2' }, { id: 'o3' }], { scope: 'orders' });
	// Completed events leave no kept row: not counted anywhere.
	await keyOperation('complete', await keep(table, [{ id: 'done' }]), table);
	await retryLater(orders.slice(0, 1), table); // scheduled

	const [unscoped, scoped] = await summary(table);
	expect(unscoped).toEqual({
		kind: 'inbox_summary',
		table: `public.${table}`,
		scope: null,
		due: { count: 2, oldestSeconds: expect.any(Number), lagSeconds: expect.any(Number) },
		running: { count: 2, oldestSeconds: expect.any(Number) },
		scheduled: none,
		dead: { ...none, longestParkedSeconds: null },
		at: expect.any(String),
	});
	expect(keysOf(running).map((key) => key.split(':')[0])).toEqual(['evt', 'sha256']);
	expect(unscoped.due).toMatchObject({
		oldestSeconds: secondsAgo(7_200),
		lagSeconds: secondsAgo(600),
	});
	expect((unscoped.running as IDataObject).oldestSeconds).toBeLessThan(60);
	expect(scoped).toMatchObject({
		scope: 'orders',
		due: { count: 0, oldestSeconds: null, lagSeconds: null },
		running: { count: 1 },
		scheduled: { count: 1 },
		dead: {
			count: 1,
			oldestSeconds: secondsAgo(86_400),
			longestParkedSeconds: secondsAgo(10_800),
		},
	});
});

it('a scope named like no unscoped prefix is a scope; `evt`-prefixed and hashed keys never are', async () => {
	const table = uniqueTableName('summary');
	await keep(table, [{ id: 'a' }], { scope: 'sha256x' });
	await keep(table, [{ id: 'b' }], { scope: 'billing' });
	await keep(table, [{ id: 'c'.repeat(600) }]); // a long id: evt-sha256:<hash>
	await keep(table, [{ id: 'd' }]);
	const scopes = await summary(table);
	expect(scopes.map(({ scope, running }) => [scope, (running as IDataObject).count])).toEqual([
		[null, 2],
		['billing', 1],
		['sha256x', 1],
	]);
});

it('an inbox with nothing kept, or a claim table that never kept an event, is one row of zeros', async () => {
	const empty = uniqueTableName('summary');
	await keep(empty, [{ id: 'gone' }]).then((items) => keyOperation('complete', items, empty));
	const plain = uniqueTableName('summary');
	await keep(plain, [{ id: 'plain' }], {}, false);
	for (const table of [empty, plain])
		expect(await summary(table)).toEqual([
			{
				kind: 'inbox_summary',
				table: `public.${table}`,
				scope: null,
				due: { ...none, lagSeconds: null },
				running: none,
				scheduled: none,
				dead: { ...none, longestParkedSeconds: null },
				at: expect.any(String),
			},
		]);
});
