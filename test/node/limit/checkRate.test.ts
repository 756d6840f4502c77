/**
 * Idempotency Limit's Check Rate through the node's own execute() against real Postgres: many executions
 * at once on several keys never start more than Max Starts of a key in any window, whichever instant it
 * begins at, and while demand exceeds the rate they start Max Starts per window; a limited item is told
 * when to try again. Time is the database's clock, stepped by the test.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { executeContext } from '../../../harness/node/executeContext';
import { IdempotencyLimit } from '../../../nodes/Idempotency/IdempotencyLimit.node';
import { testCredentials, uniqueTableName } from '../../support/database';
import { databaseClock } from '../../support/databaseClock';

const clock = databaseClock();
const node = new IdempotencyLimit();
const credentials = testCredentials({ maxConnections: 8 });
const ALLOWED = 0;
const LIMITED = 1;

function check(table: string, items: INodeExecutionData[], parameters: IDataObject = {}) {
	const context = executeContext(items, {
		parameters: {
			operation: 'checkRate',
			maxStarts: 5,
			windowSeconds: 20,
			...parameters,
			options: { table },
		},
		perItem: (name, index) =>
			name === 'limitKey' ? (items[index].json.customer ?? '') : undefined,
		credentials,
		nodeType: 'idempotencyLimit',
		nodeName: 'Idempotency Limit',
	});
	return node.execute.call(context);
}

const request = (customer: string): INodeExecutionData => ({ json: { customer } });
const rateOf = (item: INodeExecutionData) =>
	(item.json.idempotency as IDataObject).rate as IDataObject;

describe('Check Rate', () => {
	it('starts at most R per window of every key under concurrent executions, and R per window while demand exceeds it', async () => {
		const table = uniqueTableName('limits');
		await check(table, [request('warm')]);
		const customers = ['acme', 'globex', 'initech'];
		const starts = new Map<string, number[]>(customers.map((customer) => [customer, []]));
		const perStep = new Map<string, number[]>(customers.map((customer) => [customer, []]));
		// Eight steps 10 s apart on the database's clock, each 20 executions at once per key: demand far
		// above 5 per 20 s. A step begins 10 s after the last step ended (a step may take up to about 5 s of
		// real time on a loaded machine and the pattern below still holds).
		for (let step = 0; step < 8; step++) {
			const executions = customers.flatMap((customer) =>
				Array.from({ length: 20 }, () => check(table, [request(customer)])),
			);
			const outputs = await Promise.all(executions);
			for (const customer of customers) perStep.get(customer)!.push(0);
			for (const [allowed, limited] of outputs) {
				for (const item of allowed) {
					const rate = rateOf(item);
					const customer = String(item.json.customer);
					starts.get(customer)!.push(Date.parse(String(rate.startedAt)));
					perStep.get(customer)![step]++;
				}
				for (const item of limited) {
					const { retryAfterSeconds } = rateOf(item);
					expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
					expect(retryAfterSeconds).toBeLessThanOrEqual(20);
				}
			}
			await clock.advance(10);
		}
		for (const customer of customers) {
			const times = starts.get(customer)!.sort((a, b) => a - b);
			// A window holding the most starts begins at one: each such window holds 5 at most.
			for (const from of times)
				expect(times.filter((t) => t >= from && t < from + 20_000).length).toBeLessThanOrEqual(5);
			expect(perStep.get(customer)).toEqual([5, 0, 5, 0, 5, 0, 5, 0]);
		}
	});

	it('sends an allowed item on with its start, and a limited one with when the oldest start leaves', async () => {
		const table = uniqueTableName('limits');
		const items = [request('acme'), request('acme'), request('acme')];
		const [allowed, [limited]] = await check(table, items, { maxStarts: 2, windowSeconds: 30 });
		expect(allowed).toHaveLength(2);
		expect(rateOf(allowed[0])).toEqual({
			key: 'acme',
			maxStarts: 2,
			windowSeconds: 30,
			allowed: true,
			startedAt: expect.any(String),
		});
		expect(limited.pairedItem).toEqual({ item: 2 });
		expect(rateOf(limited)).toEqual({
			key: 'acme',
			maxStarts: 2,
			windowSeconds: 30,
			allowed: false,
			retryAfterSeconds: 30,
		});
		await clock.advance(29.5);
		expect(
			rateOf(
				(await check(table, [request('acme')], { maxStarts: 2, windowSeconds: 30 }))[LIMITED][0],
			).retryAfterSeconds,
		).toBe(1);
		await clock.advance(1);
		expect(
			(await check(table, [request('acme')], { maxStarts: 2, windowSeconds: 30 }))[ALLOWED],
		).toHaveLength(1);
	});

	it.each([
		[
			'Max Starts below 1',
			{ maxStarts: 0 },
			[request('acme')],
			/^Item 0: Max Starts must be a whole number from 1 to 10000, got 0$/,
		],
		['an empty key', {}, [request('acme'), request('')], /^Item 1: the limit key is empty$/],
	])(
		'refuses %s, naming the item, and counts nothing',
		async (_case, parameters, items, message) => {
			const table = uniqueTableName('limits');
			await expect(check(table, items, parameters)).rejects.toThrow(message);
			// Nothing was counted: the first real check of the key is allowed with the full rate left.
			const [allowed] = await check(table, [request('acme')], { maxStarts: 1 });
			expect(allowed).toHaveLength(1);
		},
	);
});
