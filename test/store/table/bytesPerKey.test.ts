/**
 * What a key costs on disk: table + indexes per million Stripe-like `evt:` keys,
 * claimed by the node's own statements, side by side on the same keys: the smallest table a claim can
 * use (only `key` and `first_seen`, with the purge index), a table as the node created it before its
 * columns were reordered and fingerprints shortened, one of the original layout as it created it after
 * that (status text, claim ID and fingerprint as text), and the compact table it creates now. And rows
 * written before the claim ID got shorter (a 36-character UUID) still settle.
 */
import { createHash, randomUUID } from 'node:crypto';

import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import type { ClaimOptions } from '../../../nodes/Idempotency/store/record/claimOutcome';
import { tableDataBytes } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	freshClaimTable,
	originalLayoutClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';
import { testPool, uniqueTableName } from '../../support/database';

/** Completing a claim writes a new row version; autovacuum frees the old ones for reuse while claims go on. */
const VACUUM_EVERY_KEYS = 2_000;
const MiB = 1024 * 1024;

/** A Stripe event id: `evt_` and 24 characters. */
const stripeKey = (i: number) =>
	`evt:evt_${createHash('sha1').update(String(i)).digest('base64url').slice(0, 24)}`;

/** The payload fingerprint of event i: the whole SHA-256 as the node stored it before, or the first 128 bits now. */
const fingerprintOf = (i: number, hexDigits: 64 | 32) =>
	`json:${createHash('sha256').update(String(i)).digest('hex').slice(0, hexDigits)}`;

type Layout = 'only key and first_seen' | 'before' | 'original' | 'now';

/** The table as the node created it before: the text key first, then the timestamps (padded to 8 bytes). */
const BEFORE_DDL = (name: string) => [
	`CREATE TABLE public.${name} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now(),
	 last_seen timestamptz, deliveries integer NOT NULL DEFAULT 1, status text NOT NULL DEFAULT 'completed',
	 lease_until timestamptz, claim_token text, fingerprint text)`,
	`CREATE INDEX ${name}_first_seen_idx ON public.${name} (first_seen)`,
];
const FLOOR_DDL = (name: string) => [
	`CREATE TABLE public.${name} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	`CREATE INDEX ${name}_first_seen_idx ON public.${name} (first_seen)`,
];

async function tableWith(layout: Layout): Promise<TestClaimTable> {
	if (layout === 'now') return freshClaimTable();
	if (layout === 'original') return originalLayoutClaimTable();
	const name = uniqueTableName('bytes');
	const pool = testPool(1);
	for (const statement of (layout === 'before' ? BEFORE_DDL : FLOOR_DDL)(name))
		await pool.query(statement);
	await pool.end();
	return freshClaimTable(false, name);
}

interface Run {
	layout: Layout;
	mode: ClaimOptions['mode'];
	fingerprint: boolean;
	/** Items per execution: the items of one execution share one first_seen. */
	batch: number;
	keys: number;
}

/**
 * Claims `keys` keys as executions of `batch` items would, completing each leased execution the way the
 * template's Complete step does, with VACUUM running along as autovacuum would (without it the old row
 * versions of the Completes nearly double the table: ~345 MiB per million measured).
 */
async function mibPerMillionKeys(run: Run): Promise<number> {
	const table = await tableWith(run.layout);
	const hexDigits = run.layout === 'before' ? 64 : 32;
	// (The compact table keeps the 32 digits as 16 bytes.)
	for (let start = 0; start < run.keys; start += run.batch) {
		const requests = Array.from({ length: run.batch }, (_, i) => ({
			key: stripeKey(start + i),
			fingerprint: run.fingerprint ? fingerprintOf(start + i, hexDigits) : null,
		}));
		const claimId = newClaimId();
		const outcomes = await table.claim(requests, {
			mode: run.mode,
			claimId,
			leaseSeconds: 300,
		});
		expect(outcomes.filter((outcome) => !outcome.won)).toEqual([]);
		if (run.mode === 'lease')
			await completeKeys(
				table,
				requests.map(({ key }) => ({ key, claimId })),
			);
		if ((start + run.batch) % VACUUM_EVERY_KEYS === 0)
			await table.pool.query(`VACUUM ${table.ref.qualified}`);
	}
	return mibPerMillion(table, run.keys);
}

/** The table's and its indexes' data per million keys (tableDataBytes: main forks, after a VACUUM). */
async function mibPerMillion(table: TestClaimTable, keys: number): Promise<number> {
	return (await tableDataBytes(table.pool, table.ref.qualified)) / MiB / (keys / 1_000_000);
}

function report(title: string, measured: Array<[string, number]>): void {
	process.stdout.write(
		`${title}, MiB per million evt: keys:\n${measured.map(([label, mib]) => `  ${mib.toFixed(1).padStart(6)}  ${label}\n`).join('')}`,
	);
}

const variant = (
	layout: Layout,
	mode: ClaimOptions['mode'],
	fingerprint: boolean,
	label: string,
) => ({ layout, mode, fingerprint, label });

const VARIANTS = {
	floor: variant(
		'only key and first_seen',
		'once',
		false,
		'only key and first_seen (the smallest claim table), Claim Once',
	),
	onceBefore: variant('before', 'once', false, 'Claim Once, table as created before'),
	onceOriginal: variant('original', 'once', false, 'Claim Once, original layout'),
	onceNow: variant('now', 'once', false, 'Claim Once, table created now (compact)'),
	allBefore: variant('before', 'lease', true, 'lease + Complete + fingerprint, before'),
	allOriginal: variant(
		'original',
		'lease',
		true,
		'lease + Complete + fingerprint, original layout',
	),
	allNow: variant('now', 'lease', true, 'lease + Complete + fingerprint, now (compact)'),
};
type Variant = keyof typeof VARIANTS;

/** The variants one after the other on the same keys; prints and returns MiB per million keys of each. */
async function sideBySide<V extends Variant>(
	batch: number,
	keys: number,
	variants: V[],
): Promise<Record<V, number>> {
	const measured = {} as Record<V, number>;
	for (const variant of variants)
		measured[variant] = await mibPerMillionKeys({ ...VARIANTS[variant], batch, keys });
	const floor = (measured as Partial<Record<Variant, number>>).floor;
	report(
		`${batch}-item executions`,
		variants.map((variant) => [
			`${VARIANTS[variant].label}${floor ? ` (${(measured[variant] / floor).toFixed(2)}× the smallest)` : ''}`,
			measured[variant],
		]),
	);
	return measured;
}

describe('bytes per key, side by side on the same keys', () => {
	it('100-item executions: a table the node creates now is smaller than before, in both modes', async () => {
		const { floor, onceBefore, onceOriginal, onceNow, allBefore, allOriginal, allNow } =
			await sideBySide(100, 20_000, [
				'floor',
				'onceBefore',
				'onceOriginal',
				'onceNow',
				'allBefore',
				'allOriginal',
				'allNow',
			]);
		// 8 bytes of padding per row (~7.6 MiB per million), less the pages' rounding.
		expect(onceNow).toBeLessThan(onceBefore - 4);
		// The padding and 32 hex digits of fingerprint per row (~38 MiB per million).
		expect(allNow).toBeLessThan(allBefore - 25);
		// Regression bounds, a few MiB above what was measured (182 and 236 on PostgreSQL 15 and 17).
		expect(onceNow).toBeLessThanOrEqual(188);
		expect(allNow).toBeLessThanOrEqual(245);
		expect(floor).toBeLessThan(onceNow);
		// The compact layout: no status text, the claim ID and fingerprint as bytes, counters NULL until a repeat.
		expect(onceNow).toBeLessThanOrEqual(floor * 1.1);
		expect(onceNow).toBeLessThan(onceOriginal - 15);
		expect(allNow).toBeLessThan(allOriginal - 25);
		// Complete of a 100-key batch is one statement: most pages have no room beside their claims for the
		// completed row versions, so those move to other pages (new index entries too). Measured 1.28×.
		expect(allNow).toBeLessThanOrEqual(floor * 1.32);
	}, 300_000);

	it('1-item executions (one webhook per execution): every feature on, before and now, and the floor', async () => {
		const { floor, onceNow, allBefore, allOriginal, allNow } = await sideBySide(1, 4_000, [
			'floor',
			'onceNow',
			'allBefore',
			'allOriginal',
			'allNow',
		]);
		expect(onceNow).toBeLessThanOrEqual(floor * 1.1);
		expect(allNow).toBeLessThan(allBefore - 25);
		expect(floor).toBeLessThan(allNow);
		// One key per execution, each Complete its own statement: the completed version fits beside the old one.
		expect(allNow).toBeLessThanOrEqual(floor * 1.2);
		expect(allNow).toBeLessThan(allOriginal - 25);
	}, 240_000);

	it('a 16-character claim ID makes a Claim Once table smaller than a UUID did', async () => {
		const measure = async (nextClaimId: () => string) => {
			const table = await freshClaimTable();
			for (let start = 0; start < 20_000; start += 100) {
				const keys = Array.from({ length: 100 }, (_, i) => stripeKey(start + i));
				await table.claim(keys, { mode: 'once', claimId: nextClaimId() });
			}
			return mibPerMillion(table, 20_000);
		};
		const short = await measure(newClaimId);
		const uuid = await measure(randomUUID);
		report('Claim Once by claim ID length', [
			['16-character claim ID', short],
			['UUID', uuid],
		]);
		expect(short).toBeLessThan(uuid * 0.92);
	}, 120_000);
});

describe('rows claimed with a UUID claim ID, before the claim ID got shorter', () => {
	it('complete, release and are taken over as before', async () => {
		// A table of the original layout, which keeps claim IDs as text.
		const table = await originalLayoutClaimTable();
		const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen, last_seen, status, lease_until, claim_token) VALUES
			 ('old:complete', now(), now(), 'processing', now() + interval '1 hour', $1),
			 ('old:release', now(), now(), 'processing', now() + interval '1 hour', $2),
			 ('old:expired', now() - interval '1 hour', now() - interval '1 hour', 'processing', now() - interval '1 minute', $3)`,
			[a, b, c],
		);
		expect(await completeKeys(table, [{ key: 'old:complete', claimId: a }])).toEqual([true]);
		expect(await releaseKeys(table, [{ key: 'old:release', claimId: b }])).toEqual([true]);
		const claimId = newClaimId();
		const [takeover] = await table.claim(['old:expired'], { mode: 'lease', claimId });
		expect(takeover).toMatchObject({ won: true, reclaimed: true, claimId });
		expect(await completeKeys(table, [{ key: 'old:expired', claimId: c }])).toEqual([false]);
		expect(await completeKeys(table, [{ key: 'old:expired', claimId }])).toEqual([true]);
		const { rows } = await table.pool.query(
			`SELECT key, status, claim_token FROM ${table.ref.qualified} ORDER BY key`,
		);
		expect(rows).toEqual([
			{ key: 'old:complete', status: 'completed', claim_token: null },
			{ key: 'old:expired', status: 'completed', claim_token: null },
		]);
	});
});
