import { settleBursts } from '../../../nodes/Idempotency/store/bursts/settleBursts';
import { takeDueBursts } from '../../../nodes/Idempotency/store/bursts/takeBursts';
import { Pool } from 'pg';

import { answerDroppingProxyForSuite } from '../../../harness/proxy/answerDroppingProxy';
import { testDatabaseUrl, testPool } from '../../support/database';
import { burstRow, freshBurstTables } from '../../support/freshBurstTables';

const pool = testPool(4);
afterAll(() => pool.end());

/** A burst that ends as it lands, taken to run by `holder` with an hour's lease. */
async function runningBurst(holder: string) {
	const fresh = freshBurstTables(pool);
	const collected = await fresh.collect('chat', { n: 0 }, 'dead', { maxItems: 1, leaseMs: 0 });
	await takeDueBursts(pool, fresh.tables, holder, 3_600_000, 1);
	return { ...fresh, burstId: collected.burstId };
}

describe('settling a burst', () => {
	it('Complete deletes the burst and its items, for its holder only', async () => {
		const { tables, burstId } = await runningBurst('holder-1');
		const complete = (claimId: string) =>
			settleBursts(pool, tables, 'complete', [{ burstId, claimId }]);
		expect(await complete('someone-else')).toEqual([false]);
		expect(await burstRow(pool, tables, burstId)).toMatchObject({ state: 'running' });
		expect(await complete('holder-1')).toEqual([true]);
		expect(await burstRow(pool, tables, burstId)).toBeUndefined();
		const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${tables.items}`);
		expect(rows).toEqual([{ n: 0 }]);
		// Done already: a second Complete finds nothing of this holder's.
		expect(await complete('holder-1')).toEqual([false]);
	});

	it('Release ends the lease now, so the burst is due again at once; only its holder may', async () => {
		const { tables, burstId } = await runningBurst('holder-1');
		expect(await settleBursts(pool, tables, 'release', [{ burstId, claimId: 'other' }])).toEqual([
			false,
		]);
		expect(await takeDueBursts(pool, tables, 'flush', 60_000, 10)).toEqual([]);
		expect(await settleBursts(pool, tables, 'release', [{ burstId, claimId: 'holder-1' }])).toEqual(
			[true],
		);
		const [again] = await takeDueBursts(pool, tables, 'flush', 60_000, 10);
		expect(again).toMatchObject({ id: burstId, holder: 'flush', takeovers: 2 });
	});

	it('answers each request of a batch in order; a burst not yet running is settled by no one', async () => {
		const { tables, burstId, collect } = await runningBurst('holder-1');
		const open = await collect('other chat', { n: 1 }, 'holder-2');
		expect(
			await settleBursts(pool, tables, 'complete', [
				{ burstId: open.burstId, claimId: 'holder-2' },
				{ burstId, claimId: 'holder-1' },
			]),
		).toEqual([false, true]);
		expect(await settleBursts(pool, tables, 'complete', [])).toEqual([]);
	});

	it('a request with a wrong claim ID is not settled when the holder settles the same burst in its batch', async () => {
		const { tables, burstId } = await runningBurst('holder-1');
		// Before, both answered true: the burst's ID alone was looked for among the settled.
		expect(
			await settleBursts(pool, tables, 'release', [
				{ burstId, claimId: 'someone-else' },
				{ burstId, claimId: 'holder-1' },
			]),
		).toEqual([false, true]);
		expect(
			await settleBursts(pool, tables, 'complete', [
				{ burstId, claimId: 'holder-1' },
				{ burstId, claimId: 'someone-else' },
			]),
		).toEqual([true, false]);
	});
});

describe('a Complete whose answer was lost', () => {
	const suite = answerDroppingProxyForSuite(testDatabaseUrl);

	it('reports the burst it deleted before the answer was cut as completed', async () => {
		const { tables, burstId } = await runningBurst('holder-1');
		const url = new URL(testDatabaseUrl());
		url.port = String(suite.proxy().port);
		const throughProxy = new Pool({ connectionString: url.toString(), max: 2 });
		throughProxy.on('error', () => undefined);
		try {
			suite.proxy().dropAnswerTo('WITH gone AS (DELETE');
			const dropped = suite.proxy().dropped;
			// The first attempt commits and its answer is lost; the retry finds nothing of this holder's left.
			expect(
				await settleBursts(throughProxy, tables, 'complete', [{ burstId, claimId: 'holder-1' }]),
			).toEqual([true]);
			expect(suite.proxy().dropped).toBe(dropped + 1);
			expect(await burstRow(pool, tables, burstId)).toBeUndefined();
		} finally {
			await throughProxy.end();
		}
	});
});
