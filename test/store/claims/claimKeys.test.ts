/**
 * claimKeys on real Postgres: what a claim learns of each key, one key or many alike. The payload
 * comparison is made by the statement for both (a batch compared bytes in JavaScript before).
 */
import { originalLayoutClaimTable, freshClaimTable } from '../../support/testClaimTables';

const fingerprinted = (key: string, fingerprint: string) => ({ key, fingerprint });

describe.each([
	['a compact table (fingerprint as bytes)', () => freshClaimTable()],
	['an original-layout table (fingerprint as text)', () => originalLayoutClaimTable()],
])('%s', (_, open) => {
	it('a repeat with another payload is a mismatch, in a one-key claim and in a batch alike', async () => {
		const table = await open();
		await table.claim([
			fingerprinted('evt:a', 'json:00000000000000000000000000000001'),
			fingerprinted('evt:b', 'json:00000000000000000000000000000002'),
		]);
		const [one] = await table.claim([
			fingerprinted('evt:a', 'json:00000000000000000000000000000009'),
		]);
		expect(one).toMatchObject({ won: false, mismatch: true });
		const batch = await table.claim([
			fingerprinted('evt:a', 'json:00000000000000000000000000000001'),
			fingerprinted('evt:b', 'json:00000000000000000000000000000009'),
			fingerprinted('evt:c', 'json:00000000000000000000000000000003'),
		]);
		expect(batch.map(({ key, won, mismatch }) => ({ key, won, mismatch }))).toEqual([
			{ key: 'evt:a', won: false, mismatch: false },
			{ key: 'evt:b', won: false, mismatch: true },
			{ key: 'evt:c', won: true, mismatch: false },
		]);
		// Fingerprints made differently (raw bytes against JSON) are not compared.
		const [raw] = await table.claim([
			fingerprinted('evt:a', 'raw:00000000000000000000000000000009'),
		]);
		expect(raw).toMatchObject({ won: false, mismatch: false });
	});

	it('answers each key in request order, whatever order the statement returns them in', async () => {
		const table = await open();
		await table.claim(['evt:m']);
		const outcomes = await table.claim(['evt:z', 'evt:m', 'evt:a']);
		expect(outcomes.map(({ key, won }) => ({ key, won }))).toEqual([
			{ key: 'evt:z', won: true },
			{ key: 'evt:m', won: false },
			{ key: 'evt:a', won: true },
		]);
	});
});
