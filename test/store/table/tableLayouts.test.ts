/**
 * Every operation on both layouts a claim table can have: the compact one the node creates now, and the
 * original one (status text, claim ID and fingerprint as text) of tables made earlier, which are used as
 * they are, each also split by hash of the key into partitions. The same assertions run on all four; the
 * compact layout's own bytes are checked at the end.
 */
import { purgeKeys } from '../../../nodes/Idempotency/store/claims/purgeKeys';
import {
	countStuckClaims,
	listStuckClaims,
} from '../../../nodes/Idempotency/store/claims/stuckClaims';
import { summarizeTable } from '../../../nodes/Idempotency/store/claims/tableSummary';
import { createKeyAndFirstSeenTable, rowsOf } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	freshClaimTable,
	hashPartitionedClaimTable,
	openTestClaimTable,
	originalLayoutClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

const T0 = new Date('2026-05-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const once = (seconds: number, countRepeats = true) => ({ now: at(seconds), countRepeats });
const lease = (seconds: number) => ({ mode: 'lease' as const, leaseSeconds: 60, now: at(seconds) });
const json = (key: string, hash: string) => ({ key, fingerprint: `json:${hash.repeat(32)}` });

const LAYOUTS: Array<[string, () => Promise<TestClaimTable>]> = [
	['compact (created now)', () => freshClaimTable()],
	['original (created earlier)', originalLayoutClaimTable],
	// A table an operator split by hash of the key when one table was not enough (README, "The table").
	['compact, hash-partitioned', () => hashPartitionedClaimTable('compact')],
	['original, hash-partitioned', () => hashPartitionedClaimTable('original')],
];

describe.each(LAYOUTS)('%s layout', (_layout, open) => {
	it('claim once: new, a counted repeat, a read-only repeat; one key and a batch route alike', async () => {
		const table = await open();
		const [a] = await table.claim(['evt:A'], once(0));
		expect(a).toMatchObject({ won: true, status: 'completed', deliveries: 1, leaseUntil: null });
		expect(a.firstSeen).toEqual(at(0));
		expect(a.lastSeen).toEqual(at(0));
		const [again] = await table.claim(['evt:A'], once(10));
		expect(again).toMatchObject({ won: false, duplicateKind: 'completed', deliveries: 2 });
		expect([again.firstSeen, again.lastSeen]).toEqual([at(0), at(10)]);
		const [readOnly] = await table.claim(['evt:A'], once(20, false));
		expect(readOnly).toMatchObject({ won: false, duplicateKind: 'completed', deliveries: null });
		expect(readOnly.lastSeen).toEqual(at(10));

		for (const countRepeats of [true, false]) {
			const keys = [`evt:${countRepeats}-1`, 'evt:A', `evt:${countRepeats}-2`, 'evt:A'];
			const outcomes = await table.claim(keys, once(30, countRepeats));
			expect(outcomes.map((o) => [o.won, o.duplicateKind])).toEqual([
				[true, null],
				[false, 'completed'],
				[true, null],
				[false, 'completed'],
			]);
			expect(outcomes[0].firstSeen).toEqual(at(30));
			expect(outcomes[1].firstSeen).toEqual(at(0));
		}
		expect(
			(await rowsOf(table.pool, table.ref.qualified)).find((row) => row.key === 'evt:A'),
		).toMatchObject({ deliveries: 3, status: 'completed', last_seen: at(30) });
	});

	it('claim with lease: processing, in_progress repeats, a takeover after expiry, Complete and Release', async () => {
		const table = await open();
		const [first, other] = await table.claim(['evt:L', 'evt:R'], lease(0));
		expect(first).toMatchObject({ won: true, status: 'processing', deliveries: 1 });
		expect(first.leaseUntil).toEqual(at(60));
		const [busy] = await table.claim(['evt:L'], lease(30));
		expect(busy).toMatchObject({ won: false, duplicateKind: 'in_progress', deliveries: 2 });
		const [early, taken] = await table.claim(['evt:R', 'evt:L'], lease(60));
		expect(taken).toMatchObject({ won: true, reclaimed: true, deliveries: 3 });
		expect(taken.leaseUntil).toEqual(at(120));
		expect(early).toMatchObject({ won: true, reclaimed: true });

		expect(await completeKeys(table, [{ key: 'evt:L', claimId: first.claimId }])).toEqual([false]);
		expect(await completeKeys(table, [{ key: 'evt:L', claimId: taken.claimId }])).toEqual([true]);
		expect(await releaseKeys(table, [{ key: 'evt:L', claimId: taken.claimId }])).toEqual([false]);
		expect(await releaseKeys(table, [{ key: 'evt:R', claimId: other.claimId }])).toEqual([false]);
		expect(await releaseKeys(table, [{ key: 'evt:R', claimId: early.claimId }])).toEqual([true]);
		const [done] = await table.claim(['evt:L'], lease(200));
		expect(done).toMatchObject({ won: false, duplicateKind: 'completed', status: 'completed' });
		expect(await rowsOf(table.pool, table.ref.qualified)).toMatchObject([
			{ key: 'evt:L', status: 'completed', lease_until: null, claim_token: null, deliveries: 4 },
		]);
		const [retry] = await table.claim(['evt:R'], lease(200));
		expect(retry).toMatchObject({ won: true, reclaimed: false, deliveries: 1 });
	});

	it('fingerprints: same payload a duplicate, another a mismatch never taken over, another kind not compared', async () => {
		const table = await open();
		await table.claim([json('evt:F', 'a')], lease(0));
		const [same] = await table.claim([json('evt:F', 'a')], lease(10));
		const [changed] = await table.claim([json('evt:F', 'b')], lease(100));
		const [raw] = await table.claim(
			[{ key: 'evt:F', fingerprint: `raw:${'c'.repeat(32)}` }],
			lease(110),
		);
		expect(same).toMatchObject({ won: false, mismatch: false });
		expect(changed).toMatchObject({ won: false, mismatch: true, duplicateKind: 'in_progress' });
		expect(raw).toMatchObject({ won: true, reclaimed: true, mismatch: false });
		const batch = await table.claim([json('evt:G', 'a'), json('evt:F', 'b'), json('evt:G', 'b')]);
		expect(batch.map((o) => [o.won, o.mismatch])).toEqual([
			[true, false],
			[false, true],
			[false, true],
		]);
	});

	it('purge keeps a claim being worked on, takes expired leases and completed keys, a batch at a time', async () => {
		const table = await open();
		await table.claim(['evt:live'], { mode: 'lease', leaseSeconds: 40 * 86_400, now: T0 });
		await table.claim(['evt:expired'], lease(0));
		const [done] = await table.claim(['evt:done'], lease(0));
		await completeKeys(table, [{ key: 'evt:done', claimId: done.claimId }]);
		await table.claim(
			Array.from({ length: 25 }, (_, i) => `evt:once-${i}`),
			once(0),
		);
		await table.claim(['evt:young'], once(86_400));
		const now = new Date(T0.getTime() + 30 * 86_400_000 + 1000);
		const result = await purgeKeys(table, { olderThanDays: 30, batchSize: 10, now });
		expect(result).toMatchObject({ deleted: 27, batches: 3 });
		expect((await rowsOf(table.pool, table.ref.qualified)).map((row) => row.key)).toEqual([
			'evt:live',
			'evt:young',
		]);
	});

	it('stuck claims: listed oldest first up to the limit, counted in full; the summary by status', async () => {
		const table = await open();
		const stuck = Array.from({ length: 8 }, (_, i) => `evt:stuck-${i}`);
		for (const [i, key] of stuck.entries()) await table.claim([key], lease(i));
		await table.claim(['evt:live'], { ...lease(0), leaseSeconds: 86_400 });
		const [done] = await table.claim(['evt:done'], lease(0));
		await completeKeys(table, [{ key: 'evt:done', claimId: done.claimId }]);
		await table.claim(['evt:once', 'evt:once'], once(0));
		await table.claim(['evt:once'], once(3600));
		const now = at(7200);
		const listed = await listStuckClaims(table, { firstSeenMinutesAgo: 60, limit: 2, now });
		expect(listed.claims.map((claim) => claim.key)).toEqual(stuck.slice(0, 2));
		expect(listed.claims[0]).toEqual({
			key: 'evt:stuck-0',
			firstSeen: at(0),
			lastSeen: at(0),
			deliveries: 1,
			leaseUntil: at(60),
		});
		expect(await countStuckClaims(table, { firstSeenMinutesAgo: 60, now })).toBe(8);
		expect(await countStuckClaims(table, { firstSeenMinutesAgo: 120, now })).toBe(0);
		expect(await summarizeTable(table, { now })).toEqual({
			totalKeys: 11,
			keysByStatus: { processing: 9, completed: 2 },
			keysRepeatedLastDay: 1,
			oldestKey: 'evt:done',
			oldestFirstSeen: at(0),
			now,
		});
	});
});

describe('the compact layout on disk', () => {
	it('a new table has 8 columns and no status; a claim writes only key, first_seen and 12 bytes of claim ID', async () => {
		const table = await freshClaimTable();
		expect(table.layout).toEqual({
			family: 'compact',
			statusColumn: false,
			claimIdType: 'bytea',
			fingerprintType: 'bytea',
		});
		const [claimed] = await table.claim(['evt:A'], once(0));
		const raw = async () =>
			(
				await table.pool.query(
					`SELECT first_seen, last_seen, lease_until, deliveries, key, length(claim_token) AS token_bytes,
					        length(fingerprint) AS fingerprint_bytes, encode(claim_token, 'base64') AS claim_id
					 FROM ${table.ref.qualified}`,
				)
			).rows[0];
		expect(await raw()).toMatchObject({
			first_seen: at(0),
			last_seen: null,
			lease_until: null,
			deliveries: null,
			token_bytes: 12,
			fingerprint_bytes: null,
		});
		expect(Buffer.from((await raw()).claim_id, 'base64').toString('base64url')).toBe(
			claimed.claimId,
		);
		await table.claim(['evt:A'], once(5));
		expect(await raw()).toMatchObject({ last_seen: at(5), deliveries: 2 });
		const { rows } = await table.pool.query(
			`SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
			[table.ref.qualified],
		);
		expect(rows.map((row) => row.attname)).toEqual([
			'first_seen',
			'last_seen',
			'lease_until',
			'deliveries',
			'key',
			'claim_token',
			'fingerprint',
			'response',
		]);
	});

	it('a leased claim sets lease_until only while processing; Complete clears it and the claim ID; a fingerprint is 17 bytes', async () => {
		const table = await freshClaimTable();
		const [claimed] = await table.claim([json('evt:L', 'e')], lease(0));
		const raw = async () =>
			(
				await table.pool.query(
					`SELECT lease_until, length(claim_token) AS token_bytes, encode(fingerprint, 'hex') AS fingerprint
					 FROM ${table.ref.qualified}`,
				)
			).rows[0];
		expect(await raw()).toEqual({
			lease_until: at(60),
			token_bytes: 12,
			// The kind byte (1: canonical JSON), then the 16 bytes of the 32 hex digits.
			fingerprint: `01${'e'.repeat(32)}`,
		});
		await completeKeys(table, [{ key: 'evt:L', claimId: claimed.claimId }]);
		expect(await raw()).toMatchObject({ lease_until: null, token_bytes: null });
	});

	it('Create Table If Missing gives a compact table what it lacks in compact types, and a table made earlier in its own', async () => {
		const compact = await freshClaimTable();
		await admin.query(`ALTER TABLE ${compact.ref.qualified} DROP COLUMN fingerprint`);
		// Another n8n process (a pool of its own) opens it with Create Table If Missing on.
		const needs = { createIfMissing: true, privileges: [] };
		const reopened = await openTestClaimTable(
			compact.ref.table,
			needs,
			testCredentials({ maxConnections: 4 }),
		);
		expect(reopened.capabilities.fingerprint).toBe(true);
		const keyOnly = await createKeyAndFirstSeenTable(admin, uniqueTableName('upgraded'));
		await freshClaimTable(true, keyOnly);
		const types = async (table: string) =>
			(
				await admin.query<{ column: string }>(
					`SELECT attname || ' ' || format_type(atttypid, atttypmod) AS column FROM pg_attribute
					 WHERE attrelid = $1::regclass AND attname IN ('fingerprint', 'status') ORDER BY attname`,
					[table],
				)
			).rows.map((row) => row.column);
		expect(await types(compact.ref.qualified)).toEqual(['fingerprint bytea']);
		expect(await types(keyOnly)).toEqual(['fingerprint text', 'status text']);
	});
});
