import { rowsOf } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	freshClaimTable,
	originalLayoutClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';

// The clock is a parameter of every statement: lease expiry is tested by moving it, never by sleeping.
const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const lease = (seconds: number, leaseSeconds = 60) => ({
	mode: 'lease' as const,
	leaseSeconds,
	now: at(seconds),
});
/** Complete or Release of evt:A under one claim ID; resolves to [whether it settled]. */
const completeA = (table: TestClaimTable, claimId: string | null) =>
	completeKeys(table, [{ key: 'evt:A', claimId }]);
const releaseA = (table: TestClaimTable, claimId: string | null) =>
	releaseKeys(table, [{ key: 'evt:A', claimId }]);

describe('claim with lease', () => {
	it('a claim is processing until completed; repeats meanwhile are in_progress, afterwards completed', async () => {
		const table = await freshClaimTable();
		const [first] = await table.claim(['evt:A'], lease(0));
		expect(first).toMatchObject({ won: true, status: 'processing', deliveries: 1 });
		expect(first.leaseUntil?.toISOString()).toBe(at(60).toISOString());

		const [during] = await table.claim(['evt:A'], lease(30));
		expect(during).toMatchObject({ won: false, duplicateKind: 'in_progress', deliveries: 2 });

		const completed = await completeA(table, first.claimId);
		expect(completed).toEqual([true]);
		const [after] = await table.claim(['evt:A'], lease(3600));
		expect(after).toMatchObject({
			won: false,
			duplicateKind: 'completed',
			status: 'completed',
			deliveries: 3,
		});
		const [row] = await rowsOf(table.pool, table.ref.qualified);
		expect(row).toMatchObject({ status: 'completed', lease_until: null, deliveries: 3 });
		expect((row.last_seen as Date).toISOString()).toBe(at(3600).toISOString());
		expect((row.first_seen as Date).toISOString()).toBe(T0.toISOString());
	});

	it('an expired lease is taken over by the next delivery, and the old holder can no longer settle it', async () => {
		const table = await freshClaimTable();
		const [crashed] = await table.claim(['evt:A'], lease(0));
		const [early] = await table.claim(['evt:A'], lease(59));
		expect(early.won).toBe(false);
		const [retry] = await table.claim(['evt:A'], lease(60));
		expect(retry).toMatchObject({ won: true, reclaimed: true, status: 'processing' });
		expect(retry.claimId).not.toBe(crashed.claimId);

		const staleRelease = await releaseA(table, crashed.claimId);
		const staleComplete = await completeA(table, crashed.claimId);
		expect([...staleRelease, ...staleComplete]).toEqual([false, false]);
		expect(await rowsOf(table.pool, table.ref.qualified)).toMatchObject([
			{ status: 'processing', claim_token: retry.claimId },
		]);
	});

	it('release deletes the key so the provider’s next retry is new', async () => {
		const table = await freshClaimTable();
		const [first] = await table.claim(['evt:A'], lease(0));
		const released = await releaseA(table, first.claimId);
		expect(released).toEqual([true]);
		expect(await rowsOf(table.pool, table.ref.qualified)).toEqual([]);
		const [retry] = await table.claim(['evt:A'], lease(5));
		expect(retry).toMatchObject({ won: true, reclaimed: false, deliveries: 1 });
	});

	it('release works in claim-once mode too (a failed business step frees the key)', async () => {
		const table = await freshClaimTable();
		const [first] = await table.claim(['evt:A']);
		await releaseA(table, first.claimId);
		expect((await table.claim(['evt:A']))[0].won).toBe(true);
	});

	it('a batch mixes new, in-progress, reclaimable and completed keys in one statement', async () => {
		const table = await freshClaimTable();
		const [, done] = await table.claim(['evt:old', 'evt:done'], lease(0));
		await completeKeys(table, [{ key: 'evt:done', claimId: done.claimId }]);
		await table.claim(['evt:busy'], lease(100));
		const outcomes = await table.claim(
			['evt:new', 'evt:busy', 'evt:old', 'evt:done', 'evt:new'],
			lease(120),
		);
		expect(outcomes.map((o) => [o.key, o.won, o.duplicateKind])).toEqual([
			['evt:new', true, null],
			['evt:busy', false, 'in_progress'],
			['evt:old', true, null],
			['evt:done', false, 'completed'],
			['evt:new', false, 'in_progress'],
		]);
	});
});

describe('payload fingerprint', () => {
	const json = (fp: string) => ({ key: 'evt:A', fingerprint: `json:${fp}` });

	it('flags a delivery with the same key and a different payload; the same payload is a plain duplicate', async () => {
		const table = await freshClaimTable();
		await table.claim([json('aaa')]);
		const [same] = await table.claim([json('aaa')]);
		const [other] = await table.claim([json('bbb')]);
		expect(same).toMatchObject({ won: false, mismatch: false });
		expect(other).toMatchObject({ won: false, mismatch: true });
	});

	it('fingerprints made differently (raw vs json) are not compared', async () => {
		const table = await freshClaimTable();
		await table.claim([json('aaa')]);
		const [raw] = await table.claim([{ key: 'evt:A', fingerprint: 'raw:zzz' }]);
		expect(raw.mismatch).toBe(false);
	});

	it('an expired lease is not taken over by a different payload', async () => {
		const table = await freshClaimTable();
		await table.claim([json('aaa')], lease(0));
		const [other] = await table.claim([json('bbb')], lease(600));
		expect(other).toMatchObject({ won: false, mismatch: true, duplicateKind: 'in_progress' });
		const [same] = await table.claim([json('aaa')], lease(601));
		expect(same).toMatchObject({ won: true, reclaimed: true });
	});

	it('rows stored with the whole SHA-256 match the shorter fingerprint of the same payload, in both modes', async () => {
		// Such rows exist only in tables of the original layout, which keep fingerprints as text.
		const table = await originalLayoutClaimTable();
		const whole = 'ab'.repeat(32);
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen, status, lease_until, fingerprint) VALUES
			 ('evt:done', $1, 'completed', NULL, $2), ('evt:expired', $1, 'processing', $1, $2)`,
			[at(0), `json:${whole}`],
		);
		const short = (key: string) => ({ key, fingerprint: `json:${whole.slice(0, 32)}` });
		const other = (key: string) => ({ key, fingerprint: `json:${'cd'.repeat(16)}` });
		const [done] = await table.claim([short('evt:done')]);
		const [changed] = await table.claim([other('evt:done')]);
		expect(done).toMatchObject({ won: false, mismatch: false });
		expect(changed).toMatchObject({ won: false, mismatch: true });
		const [notTaken] = await table.claim([other('evt:expired')], lease(10));
		expect(notTaken).toMatchObject({ won: false, mismatch: true });
		const [taken] = await table.claim([short('evt:expired')], lease(20));
		expect(taken).toMatchObject({ won: true, reclaimed: true, mismatch: false });
	});

	it('flags a mismatch between two items of one batch', async () => {
		const table = await freshClaimTable();
		const outcomes = await table.claim([json('aaa'), json('bbb'), json('aaa')]);
		expect(outcomes.map((o) => [o.won, o.mismatch])).toEqual([
			[true, false],
			[false, true],
			[false, false],
		]);
	});
});

describe('who may settle a claim', () => {
	it('Release after Complete deletes nothing: the next redelivery is a completed duplicate', async () => {
		const table = await freshClaimTable();
		const [first] = await table.claim(['evt:A'], lease(0));
		expect(await completeA(table, first.claimId)).toEqual([true]);
		expect(await releaseA(table, first.claimId)).toEqual([false]);
		const [redelivery] = await table.claim(['evt:A'], lease(10));
		expect(redelivery).toMatchObject({ won: false, duplicateKind: 'completed' });
	});

	it('Release with an empty claim ID matches nothing, never another execution’s claim', async () => {
		const table = await freshClaimTable();
		await table.claim(['evt:A'], lease(0));
		expect(await releaseA(table, null)).toEqual([false]);
		expect(await rowsOf(table.pool, table.ref.qualified)).toMatchObject([
			{ key: 'evt:A', status: 'processing' },
		]);
	});

	it('a claim-once claim stays releasable by its own holder, and only by it', async () => {
		const table = await freshClaimTable();
		const [holder] = await table.claim(['evt:A']);
		const [other] = await table.claim(['evt:A']);
		expect(await releaseA(table, other.claimId)).toEqual([false]);
		expect(await releaseA(table, holder.claimId)).toEqual([true]);
	});

	it('Complete on a batch holding one key under a stale and the current claim ID reports only the current one', async () => {
		const table = await freshClaimTable();
		const [stale] = await table.claim(['evt:A'], lease(0));
		const [current] = await table.claim(['evt:A'], lease(61));
		expect(current.reclaimed).toBe(true);
		const settled = await completeKeys(table, [
			{ key: 'evt:A', claimId: stale.claimId },
			{ key: 'evt:A', claimId: current.claimId },
		]);
		expect(settled).toEqual([false, true]);
	});

	it('Complete is safe to repeat after a lost answer: the second attempt reports the key completed', async () => {
		const table = await freshClaimTable();
		const [first] = await table.claim(['evt:A'], lease(0));
		expect(await completeA(table, first.claimId)).toEqual([true]);
		expect(await completeA(table, first.claimId)).toEqual([true]);
		expect(await rowsOf(table.pool, table.ref.qualified)).toMatchObject([
			{ status: 'completed', claim_token: null },
		]);
	});
});
