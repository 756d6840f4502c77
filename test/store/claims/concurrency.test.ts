import { completeKeys, freshClaimTable, openTestClaimTable } from '../../support/testClaimTables';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const CLAIMERS = 8;

describe('one winner under concurrency (real Postgres, pooled connections)', () => {
	it('1,000 rounds of 8 concurrent claims of one fresh key: exactly one winner every round', async () => {
		const table = await freshClaimTable();
		const winnersPerRound: number[] = [];
		for (let round = 0; round < 1000; round++) {
			const key = `evt:round-${round}`;
			const outcomes = await Promise.all(
				Array.from({ length: CLAIMERS }, () => table.claim([key])),
			);
			winnersPerRound.push(outcomes.filter(([o]) => o.won).length);
		}
		expect(winnersPerRound.filter((w) => w !== 1)).toEqual([]);
		const rows = await table.pool.query(
			`SELECT count(*)::int AS n, sum(deliveries)::int AS d FROM ${table.ref.qualified}`,
		);
		expect(rows.rows[0]).toEqual({ n: 1000, d: 1000 * CLAIMERS });
	});

	it('an expired lease: exactly one of 8 concurrent reclaimers wins, 200 rounds', async () => {
		const table = await freshClaimTable();
		const start = new Date('2026-01-01T00:00:00Z');
		const later = new Date(start.getTime() + 61_000);
		const reclaimWinners: number[] = [];
		for (let round = 0; round < 200; round++) {
			const key = `evt:lease-${round}`;
			await table.claim([key], { mode: 'lease', leaseSeconds: 60, now: start });
			const outcomes = await Promise.all(
				Array.from({ length: CLAIMERS }, () =>
					table.claim([key], { mode: 'lease', leaseSeconds: 60, now: later }),
				),
			);
			reclaimWinners.push(outcomes.filter(([o]) => o.won && o.reclaimed).length);
			expect(
				outcomes.filter(([o]) => !o.won).every(([o]) => o.duplicateKind === 'in_progress'),
			).toBe(true);
		}
		expect(reclaimWinners.filter((w) => w !== 1)).toEqual([]);
	});

	it('concurrent batches sharing keys in opposite orders neither deadlock nor double-claim', async () => {
		const table = await freshClaimTable();
		for (let round = 0; round < 30; round++) {
			const keys = Array.from(
				{ length: 200 },
				(_, i) => `evt:${round}-${String(i).padStart(3, '0')}`,
			);
			const reversed = [...keys].reverse();
			const results = await Promise.all([
				table.claim(keys, { mode: 'lease' }),
				table.claim(reversed, { mode: 'lease' }),
				table.claim(keys),
				table.claim(reversed),
			]);
			const winsPerKey = new Map<string, number>();
			for (const outcomes of results)
				for (const o of outcomes)
					if (o.won) winsPerKey.set(o.key, (winsPerKey.get(o.key) ?? 0) + 1);
			expect(winsPerKey.size).toBe(200);
			expect([...winsPerKey.values()].every((n) => n === 1)).toBe(true);
			// Completing all in reverse order while a batch re-claims them must not deadlock either.
			await Promise.all([
				completeKeys(
					table,
					reversed.map((key) => ({ key, claimId: null })),
				),
				table.claim(keys, { mode: 'lease' }),
			]);
		}
	});

	it('Claim Once and Claim With Lease on one table, with repeats and new keys mixed, never deadlock (Postgres counts none)', async () => {
		const table = await openTestClaimTable(
			uniqueTableName('mixed'),
			{ createIfMissing: true, privileges: [] },
			testCredentials({ maxConnections: 7 }),
		);
		const deadlocks = async () => {
			await admin.query('SELECT pg_stat_clear_snapshot()');
			return (
				await admin.query<{ n: string }>(
					'SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()',
				)
			).rows[0].n;
		};
		const before = await deadlocks();
		for (let round = 0; round < 10; round++) {
			const keys = Array.from(
				{ length: 1000 },
				(_, i) => `evt:mix-${round}-${String(i).padStart(4, '0')}`,
			);
			await table.claim(keys.filter((_, i) => i % 2 === 0)); // half the keys are repeats
			const reversed = [...keys].reverse();
			await Promise.all([
				table.claim(keys, { countRepeats: true }),
				table.claim(reversed, { mode: 'lease' }),
				table.claim(reversed, { countRepeats: false }),
				table.claim(keys, { mode: 'lease' }),
			]);
		}
		// A backend reports its statistics when it exits: end the pool, then read the server's count.
		await table.pool.end();
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(await deadlocks()).toBe(before);
	});
});
