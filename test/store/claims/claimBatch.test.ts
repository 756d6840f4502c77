/**
 * claimBatch on its own: one outcome per request in request order, a key given twice in one batch claimed
 * once (the later item a duplicate of the first), and one row per key whatever the batch held.
 */
import { claimBatch } from '../../../nodes/Idempotency/store/claims/claimBatch';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import type { ClaimOptions } from '../../../nodes/Idempotency/store/record/claimOutcome';
import { rowsOf } from '../../support/claimTableSql';
import { freshClaimTable } from '../../support/testClaimTables';

const once = (): ClaimOptions => ({
	mode: 'once',
	leaseSeconds: 60,
	countRepeats: true,
	claimId: newClaimId(),
});
const lease = (): ClaimOptions => ({ ...once(), mode: 'lease' });
const request = (key: string, fingerprint: string | null = null) => ({ key, fingerprint });

describe('claimBatch', () => {
	it('answers each request in its order, one row per key', async () => {
		const table = await freshClaimTable();
		const outcomes = await claimBatch(
			table,
			['b', 'a', 'c'].map((key) => request(key)),
			once(),
		);
		expect(outcomes.map(({ key, won }) => [key, won])).toEqual([
			['b', true],
			['a', true],
			['c', true],
		]);
		const keys = (await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key);
		expect(keys.sort()).toEqual(['a', 'b', 'c']);
	});

	it('under a lease, a key repeated within the batch is in progress (its winner is this very batch) and holds no claim ID', async () => {
		const table = await freshClaimTable();
		const options = lease();
		const [first, repeat] = await claimBatch(table, [request('k'), request('k')], options);
		expect(first).toMatchObject({ won: true, claimId: options.claimId, status: 'processing' });
		expect(repeat).toMatchObject({
			key: 'k',
			won: false,
			reclaimed: false,
			duplicateKind: 'in_progress',
			claimId: null,
		});
		expect(await rowsOf(table.pool, table.ref.qualified)).toHaveLength(1);
	});

	it('claimed once, a key repeated within the batch is a completed duplicate', async () => {
		const table = await freshClaimTable();
		const [first, repeat] = await claimBatch(table, [request('k'), request('k')], once());
		expect(first.won).toBe(true);
		expect(repeat).toMatchObject({ won: false, duplicateKind: 'completed', claimId: null });
	});

	it('a repeat within the batch with another payload fingerprint is a mismatch; the same one is not', async () => {
		const table = await freshClaimTable();
		const outcomes = await claimBatch(
			table,
			[request('k', 'f1'), request('k', 'f1'), request('k', 'f2')],
			once(),
		);
		expect(outcomes.map(({ won, mismatch }) => [won, mismatch])).toEqual([
			[true, false],
			[false, false],
			[false, true],
		]);
	});

	it("a repeat of a key another batch holds keeps that claim's state; the first item of this batch is the duplicate", async () => {
		const table = await freshClaimTable();
		const [held] = await claimBatch(table, [request('k')], lease());
		const outcomes = await claimBatch(table, [request('k'), request('k'), request('new')], lease());
		expect(outcomes.map(({ won, duplicateKind }) => [won, duplicateKind])).toEqual([
			[false, 'in_progress'],
			[false, 'in_progress'],
			[true, null],
		]);
		expect(outcomes[0].firstSeen).toEqual(held.firstSeen);
	});
});
