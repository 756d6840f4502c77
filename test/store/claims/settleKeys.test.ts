/**
 * Complete and Release on the store's own functions: what each (key, claim ID) pair reports, and what
 * the row is afterwards, on a real table.
 */
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { completeClaims, releaseClaims } from '../../../nodes/Idempotency/store/claims/settleKeys';
import { storedResponseText } from '../../../nodes/Idempotency/response/storedResponse';
import { rowsOf } from '../../support/claimTableSql';
import { freshClaimTable, type TestClaimTable } from '../../support/testClaimTables';

async function rowOf(table: TestClaimTable, key: string) {
	return (await rowsOf(table.pool, table.ref.qualified)).find((row) => row.key === key);
}

async function leased(table: TestClaimTable, key: string): Promise<string> {
	const [outcome] = await table.claim([key], { mode: 'lease' });
	expect(outcome.won).toBe(true);
	return outcome.claimId!;
}

const response = (body: string) =>
	storedResponseText({ statusCode: 201, bodyType: 'text', body, headers: [] }, 65536);

describe('completeClaims', () => {
	it("completes the holder's claim: the row keeps no lease and no claim ID", async () => {
		const table = await freshClaimTable();
		const claimId = await leased(table, 'a');
		expect(await completeClaims(table, [{ key: 'a', claimId }])).toEqual([
			{ state: 'completed', response: null },
		]);
		expect(await rowOf(table, 'a')).toMatchObject({ lease_until: null, claim_token: null });
	});

	it("reports another holder's claim as processing and leaves it, and a missing key as not_found", async () => {
		const table = await freshClaimTable();
		const claimId = await leased(table, 'held');
		const before = await rowOf(table, 'held');
		const settled = await completeClaims(table, [
			{ key: 'held', claimId: newClaimId() },
			{ key: 'missing', claimId },
		]);
		expect(settled.map(({ state }) => state)).toEqual(['processing', 'not_found']);
		expect(await rowOf(table, 'held')).toEqual(before);
	});

	it('is safe to repeat: a key completed already reports completed, whoever completed it', async () => {
		const table = await freshClaimTable();
		const claimId = await leased(table, 'a');
		await completeClaims(table, [{ key: 'a', claimId }]);
		expect((await completeClaims(table, [{ key: 'a', claimId }]))[0].state).toBe('completed');
		expect((await completeClaims(table, [{ key: 'a', claimId: null }]))[0].state).toBe('completed');
	});

	it('without a claim ID completes the key whoever holds it', async () => {
		const table = await freshClaimTable();
		await leased(table, 'a');
		expect((await completeClaims(table, [{ key: 'a', claimId: null }]))[0].state).toBe('completed');
		expect(await rowOf(table, 'a')).toMatchObject({ lease_until: null, claim_token: null });
	});

	it('stores the response given, and a second Complete keeps the first one', async () => {
		const table = await freshClaimTable();
		const claimId = await leased(table, 'a');
		const [first] = await completeClaims(table, [
			{ key: 'a', claimId, response: response('first') },
		]);
		expect(first).toEqual({
			state: 'completed',
			response: { statusCode: 201, headers: { 'content-type': expect.any(String) }, body: 'first' },
		});
		const [again] = await completeClaims(table, [
			{ key: 'a', claimId, response: response('second') },
		]);
		expect(again.response?.body).toBe('first');
	});

	it('answers each request of a batch in its order, a key asked twice included', async () => {
		const table = await freshClaimTable();
		const a = await leased(table, 'a');
		const b = await leased(table, 'b');
		const settled = await completeClaims(table, [
			{ key: 'b', claimId: b },
			{ key: 'nope', claimId: a },
			{ key: 'a', claimId: a },
			{ key: 'b', claimId: b },
		]);
		expect(settled.map(({ state }) => state)).toEqual([
			'completed',
			'not_found',
			'completed',
			'completed',
		]);
	});

	it('an empty batch sends nothing and answers nothing', async () => {
		const table = await freshClaimTable();
		expect(await completeClaims(table, [])).toEqual([]);
	});
});

describe('releaseClaims', () => {
	it("deletes the holder's claim, so the next delivery of the key wins it again", async () => {
		const table = await freshClaimTable();
		const claimId = await leased(table, 'a');
		expect(await releaseClaims(table, [{ key: 'a', claimId }])).toEqual([
			{ state: 'released', response: null },
		]);
		expect(await rowOf(table, 'a')).toBeUndefined();
		const [again] = await table.claim(['a'], { mode: 'lease' });
		expect(again.won).toBe(true);
	});

	it("never deletes another holder's claim nor a completed key", async () => {
		const table = await freshClaimTable();
		await leased(table, 'held');
		const done = await leased(table, 'done');
		await completeClaims(table, [{ key: 'done', claimId: done }]);
		const settled = await releaseClaims(table, [
			{ key: 'held', claimId: newClaimId() },
			{ key: 'done', claimId: done },
			{ key: 'missing', claimId: done },
		]);
		expect(settled.map(({ state }) => state)).toEqual(['processing', 'completed', 'not_found']);
		const keys = (await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key).sort();
		expect(keys).toEqual(['done', 'held']);
	});
});
