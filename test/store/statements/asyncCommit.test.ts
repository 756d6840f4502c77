/**
 * A statement that only counted repeats commits without waiting for its WAL to reach disk; every
 * statement that claims, takes over, completes or releases waits as the server is set. Shown with a crash:
 * the server's WAL writer is held back (so an asynchronous commit's WAL stays in memory), claims and
 * repeats run, and the server is stopped immediately and started again on the WAL it had written.
 */
import { rowsOf } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	openTestClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';
import { credentialsFromUrl } from '../../../harness/postgres/connections';
import { OwnPostgres } from '../../../harness/postgres/server';

let server: OwnPostgres;
beforeAll(async () => {
	// Nothing else may write WAL while the WAL writer is held back: no autovacuum, no background writes of
	// dirty pages (each would first write the WAL up to that page), no timed checkpoint.
	server = await OwnPostgres.start({
		settings: { autovacuum: 'off', bgwriter_lru_maxpages: '0', checkpoint_timeout: '1h' },
	});
}, 60_000);
afterAll(async () => {
	await server?.stop();
});

const T0 = new Date('2026-06-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const lease = (seconds: number) => ({ mode: 'lease' as const, leaseSeconds: 60, now: at(seconds) });
const batch = Array.from({ length: 50 }, (_, i) => `evt:batch-${String(i).padStart(2, '0')}`);

function openTable(): Promise<TestClaimTable> {
	return openTestClaimTable(
		'crash_claims',
		{ createIfMissing: true, privileges: [] },
		credentialsFromUrl(server.url),
	);
}

/** Bytes of WAL inserted but not yet written out: what a crash now would lose. */
async function walNotWritten(table: TestClaimTable): Promise<number> {
	const { rows } = await table.pool.query<{ bytes: number }>(
		'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn())::float8 AS bytes',
	);
	return rows[0].bytes;
}

describe('a crash right after claims and repeats', () => {
	it('every claim, takeover, Complete and Release survives; what is lost is the counters of statements that only counted repeats', async () => {
		const table = await openTable();
		await table.claim(['evt:expired'], lease(0));
		const [toComplete, toRelease] = await table.claim(['evt:done', 'evt:failed'], lease(100));
		await server.holdBackWalWriter();

		// Claims: each commit has written its WAL by the time the claim is answered.
		const written = async <T>(statement: Promise<T>): Promise<T> => {
			const answer = await statement;
			expect(await walNotWritten(table)).toBe(0);
			return answer;
		};
		const claimed = await written(table.claim(batch, { now: at(200) }));
		const [single] = await written(table.claim(['evt:single'], { now: at(200) }));
		const [leased] = await written(table.claim(['evt:leased'], lease(200)));
		const [takeover] = await written(table.claim(['evt:expired'], lease(200)));
		expect([...claimed, single, leased].every((o) => o.won)).toBe(true);
		expect(takeover.reclaimed).toBe(true);
		const done = { key: 'evt:done', claimId: toComplete.claimId };
		const failed = { key: 'evt:failed', claimId: toRelease.claimId };
		expect(await written(completeKeys(table, [done]))).toEqual([true]);
		expect(await written(releaseKeys(table, [failed]))).toEqual([true]);

		// Repeats only: counted and answered, each commit's WAL still in the server's memory.
		let notWritten = 0;
		for (const repeat of [
			() => table.claim(batch, { now: at(300) }),
			() => table.claim(['evt:single'], { now: at(300) }),
			() => table.claim(['evt:leased'], lease(250)),
			() => table.claim(['evt:done', 'evt:expired'], lease(250)),
		]) {
			const outcomes = await repeat();
			expect(outcomes.every((o) => !o.won && (o.deliveries ?? 0) >= 2)).toBe(true);
			const now = await walNotWritten(table);
			expect(now).toBeGreaterThan(notWritten);
			notWritten = now;
		}

		await server.crash();
		const after = await openTable();
		const rows = new Map(
			(await rowsOf(after.pool, after.ref.qualified)).map((row) => [row.key, row]),
		);
		expect([...rows.keys()].sort()).toEqual(
			[...batch, 'evt:done', 'evt:expired', 'evt:leased', 'evt:single'].sort(),
		);
		for (const key of [...batch, 'evt:single'])
			expect(rows.get(key)).toMatchObject({
				status: 'completed',
				deliveries: 1,
				claim_token: expect.any(String),
			});
		expect(rows.get('evt:leased')).toMatchObject({
			status: 'processing',
			deliveries: 1,
			claim_token: leased.claimId,
			lease_until: at(260),
		});
		expect(rows.get('evt:expired')).toMatchObject({
			status: 'processing',
			deliveries: 2,
			claim_token: takeover.claimId,
			last_seen: at(200),
		});
		expect(rows.get('evt:done')).toMatchObject({
			status: 'completed',
			claim_token: null,
			deliveries: 1,
		});
		// The same repeats after the crash are duplicates, counted again.
		const [again] = await after.claim(['evt:single'], { now: at(400) });
		expect(again).toMatchObject({ won: false, duplicateKind: 'completed', deliveries: 2 });
	}, 60_000);
});
