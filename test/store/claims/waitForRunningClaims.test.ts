/**
 * The store's wait for a running claim, with the looks' own schedule replaced: a wait whose scheduled looks
 * never come can only end through this process's Complete or Release (settleSignals), or a look after it.
 */
import { completeClaims, releaseClaims } from '../../../nodes/Idempotency/store/claims/settleKeys';
import { waitForRunningClaims } from '../../../nodes/Idempotency/store/claims/waitForRunningClaims';
import type { ClaimOptions } from '../../../nodes/Idempotency/store/record/claimOutcome';
import { freshClaimTable, originalLayoutClaimTable } from '../../support/testClaimTables';

const LEASE: Partial<ClaimOptions> = { mode: 'lease', leaseSeconds: 60 };
const never = () => new Promise<void>(() => undefined);
const lease = (claimId: string): ClaimOptions => ({
	mode: 'lease',
	leaseSeconds: 60,
	countRepeats: true,
	claimId,
});

describe('waiting for a running claim, inside one process', () => {
	it('wakes at once when this process completes the key, with the answer Complete stored', async () => {
		const table = await freshClaimTable();
		const [holder] = await table.claim(['evt:S1'], { ...LEASE, claimId: 'holder-claim-0001' });
		const request = { key: 'evt:S1', fingerprint: null };
		const [waiter] = await table.claim([request], { ...LEASE, claimId: 'waiter-claim-0001' });
		expect(waiter.duplicateKind).toBe('in_progress');

		const outcomes = [waiter];
		const waited = waitForRunningClaims(
			table,
			[request],
			outcomes,
			lease('waiter-claim-0001'),
			60_000,
			never,
		);
		const response = JSON.stringify({ statusCode: 200, headers: {}, body: 'done' });
		await completeClaims(table, [{ key: 'evt:S1', claimId: holder.claimId, response }]);
		await waited;
		expect(outcomes[0]).toMatchObject({ duplicateKind: 'completed', status: 'completed' });
		expect(outcomes[0].response).toEqual({ statusCode: 200, headers: {}, body: 'done' });
	});

	it('a processing claim of the original layout left with no lease has ended: the next look takes it over', async () => {
		const table = await originalLayoutClaimTable();
		await table.claim(['evt:S0'], { ...LEASE, claimId: 'holder-claim-0000' });
		const request = { key: 'evt:S0', fingerprint: null };
		const outcomes = await table.claim([request], { ...LEASE, claimId: 'waiter-claim-0000' });
		expect(outcomes[0].duplicateKind).toBe('in_progress');
		await table.pool.query(`UPDATE ${table.ref.qualified} SET lease_until = NULL`);
		await waitForRunningClaims(table, [request], outcomes, lease('waiter-claim-0000'), 60_000, () =>
			Promise.resolve(),
		);
		expect(outcomes[0]).toMatchObject({ won: true, reclaimed: true, claimId: 'waiter-claim-0000' });
	});

	it('wakes at once when this process releases the key, and takes the claim', async () => {
		const table = await freshClaimTable();
		const [holder] = await table.claim(['evt:S2'], { ...LEASE, claimId: 'holder-claim-0002' });
		const request = { key: 'evt:S2', fingerprint: null };
		const outcomes = await table.claim([request], { ...LEASE, claimId: 'waiter-claim-0002' });
		const waited = waitForRunningClaims(
			table,
			[request],
			outcomes,
			lease('waiter-claim-0002'),
			60_000,
			never,
		);
		await releaseClaims(table, [{ key: 'evt:S2', claimId: holder.claimId }]);
		await waited;
		expect(outcomes[0]).toMatchObject({ won: true, claimId: 'waiter-claim-0002' });
	});

	it("a Complete of another key does not end the wait; its own key's Complete does", async () => {
		const table = await freshClaimTable();
		const [holder, other] = await table.claim(['evt:S3', 'evt:S4'], {
			...LEASE,
			claimId: 'holder-claim-0003',
		});
		const request = { key: 'evt:S3', fingerprint: null };
		const outcomes = await table.claim([request], { ...LEASE, claimId: 'waiter-claim-0003' });
		let done = false;
		const waited = waitForRunningClaims(
			table,
			[request],
			outcomes,
			lease('waiter-claim-0003'),
			60_000,
			never,
		).then(() => (done = true));
		await completeClaims(table, [{ key: 'evt:S4', claimId: other.claimId }]);
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(done).toBe(false);
		await completeClaims(table, [{ key: 'evt:S3', claimId: holder.claimId }]);
		await waited;
		expect(outcomes[0].duplicateKind).toBe('completed');
	});
});
