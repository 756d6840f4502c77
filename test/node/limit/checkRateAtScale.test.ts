/**
 * Check Rate at the size issue 41 asks for, through the node's own execute() against real Postgres: 10 keys,
 * 1,000 attempts each spread over 30 s of the database's clock, R = 50 per 10 s. Every attempt is an
 * execution of its own, a step's attempts all at once. Shown, from the starts' own times (the database's
 * clock_timestamp()): no window of 10 s, wherever it begins, holds more than 50 starts of a key; and while
 * demand exceeds the rate, every 10 s from a key's first start holds at least 95 % of 50.
 *
 * The clock: each step is scheduled 0.3 s after the last on the database's clock; when the step before took
 * less real time than that, the clock is moved on to the step's time (never back), so the run covers 30 s of
 * the database's time in however much real time the machine needs.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { executeContext } from '../../../harness/node/executeContext';
import { IdempotencyLimit } from '../../../nodes/Idempotency/IdempotencyLimit.node';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';
import { databaseClock } from '../../support/databaseClock';

const clock = databaseClock();
const node = new IdempotencyLimit();
const credentials = testCredentials({ maxConnections: 8 });
const reader = testPool(1);
afterAll(() => reader.end());

const KEYS = 10;
const ATTEMPTS_PER_KEY = 1_000;
const MAX_STARTS = 50;
const WINDOW_MS = 10_000;
const STEPS = 100;
const STEP_MS = 300;

function check(table: string, customer: string) {
	const items: INodeExecutionData[] = [{ json: { customer } }];
	const context = executeContext(items, {
		parameters: {
			operation: 'checkRate',
			maxStarts: MAX_STARTS,
			windowSeconds: WINDOW_MS / 1000,
			options: { table },
		},
		perItem: (name) => (name === 'limitKey' ? customer : undefined),
		credentials,
		nodeType: 'idempotencyLimit',
		nodeName: 'Idempotency Limit',
	});
	return node.execute.call(context);
}

async function databaseNowMs(): Promise<number> {
	const { rows } = await reader.query<{ t: Date }>('SELECT clock_timestamp() AS t');
	return rows[0].t.getTime();
}

/** How many of the sorted times fall in [from, from + length). */
function countIn(sorted: number[], from: number, length: number): number {
	return sorted.filter((t) => t >= from && t < from + length).length;
}

it(`${KEYS} keys × ${ATTEMPTS_PER_KEY} attempts over 30 s with R = ${MAX_STARTS} per 10 s: at most R in every window, at least 95 % of R used while demand exceeds it`, async () => {
	const table = uniqueTableName('rates');
	const customers = Array.from({ length: KEYS }, (_, index) => `customer-${index}`);
	await check(table, 'warm');
	const starts = new Map<string, number[]>(customers.map((customer) => [customer, []]));
	/** Each step's attempts were decided between these two times of the database's clock. */
	const steps: Array<{ from: number; to: number }> = [];
	const perStep = ATTEMPTS_PER_KEY / STEPS;
	const first = await databaseNowMs();
	for (let step = 0; step < STEPS; step++) {
		const behind = first + step * STEP_MS - (await databaseNowMs());
		if (behind > 0) await clock.advance(behind / 1000);
		const from = await databaseNowMs();
		const outputs = await Promise.all(
			customers.flatMap((customer) =>
				Array.from({ length: perStep }, () => check(table, customer)),
			),
		);
		steps.push({ from, to: await databaseNowMs() });
		for (const [allowed] of outputs)
			for (const item of allowed) {
				const rate = (item.json.idempotency as IDataObject).rate as IDataObject;
				starts.get(String(item.json.customer))!.push(Date.parse(String(rate.startedAt)));
			}
	}
	const lastAttempt = steps[steps.length - 1].to;
	expect(lastAttempt - first).toBeGreaterThanOrEqual((STEPS - 1) * STEP_MS);

	const windows: Record<string, number[]> = {};
	for (const customer of customers) {
		const times = starts.get(customer)!.sort((a, b) => a - b);
		// A window holding the most starts begins at one: each such window holds R at most.
		const busiest = Math.max(...times.map((from) => countIn(times, from, WINDOW_MS)));
		expect(busiest).toBeLessThanOrEqual(MAX_STARTS);
		// The consecutive windows from the key's first start in which demand exceeds R: more than R attempts
		// were decided in the steps wholly inside the window.
		windows[customer] = [];
		for (let from = times[0]; from < lastAttempt; from += WINDOW_MS) {
			const demand =
				perStep * steps.filter((s) => s.from >= from && s.to < from + WINDOW_MS).length;
			if (demand > MAX_STARTS) windows[customer].push(countIn(times, from, WINDOW_MS));
		}
	}
	console.log(
		`Check Rate, ${KEYS} keys × ${ATTEMPTS_PER_KEY} attempts over ${((lastAttempt - first) / 1000).toFixed(1)} s of the database's clock: starts per key per 10 s from its first start ${JSON.stringify(windows)}`,
	);
	for (const customer of customers) {
		// At least 30 s from the first start: three windows or more (a loaded machine's steps can take longer
		// than their 0.3 s, and stretch the run), each with demand above R.
		expect(windows[customer].length).toBeGreaterThanOrEqual(3);
		for (const count of windows[customer]) expect(count).toBeGreaterThanOrEqual(0.95 * MAX_STARTS);
	}
}, 600_000);
