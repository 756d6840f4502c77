// Bytes per key: table + index data per million Stripe-like keys claimed through the built nodes, the
// same keys on every table in one run: the smallest table a claim and a purge can use (key, first_seen
// and its index), the compact table the node creates now and one of the original layout, Claim Once and
// Claim With Lease with a payload fingerprint and a Complete after each execution, in executions of 100
// items and of one. test/store/bytesPerKey.test.ts holds the same tables to these bounds.
import { createHash } from 'node:crypto';

import type { Pool } from 'pg';

import { ORIGINAL_LAYOUT_DDL, tableDataBytes } from '../../harness/postgres/claimTableSql';
import type { Benchmark, BenchRow } from '../lib/benchmark';
import { completeRunner, nodeClaimer, type ClaimSettings } from '../lib/nodeClaims';
import { formatRatio } from '../lib/stats';

const MiB = 1024 * 1024;
/** Completing a claim leaves an old row version; autovacuum frees them for reuse while claims go on. */
const VACUUM_EVERY_KEYS = 2_000;

type Table = 'smallest' | 'compact' | 'original';

interface Variant {
	label: string;
	table: Table;
	lease: boolean;
}

const VARIANTS: Variant[] = [
	{ label: 'only key and first_seen + its index (the smallest)', table: 'smallest', lease: false },
	{ label: 'Claim Once, compact (created now)', table: 'compact', lease: false },
	{ label: 'Claim Once, original layout', table: 'original', lease: false },
	{
		label: 'Claim With Lease + fingerprint + Complete, compact',
		table: 'compact',
		lease: true,
	},
	{
		label: 'Claim With Lease + fingerprint + Complete, original layout',
		table: 'original',
		lease: true,
	},
];

/** The targets: compact ÷ smallest, by claim mode. */
const TARGETS = { once: 1.1, lease: 1.2 };

/** A Stripe event id: `evt_` and 24 characters, the same for every table. */
const eventId = (i: number) =>
	`evt_${createHash('sha1').update(String(i)).digest('base64url').slice(0, 24)}`;

export const title = '5a. Bytes per key';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const shapes = [
		{ batch: 100, keys: quick ? 4_000 : 20_000 },
		{ batch: 1, keys: quick ? 1_000 : 4_000 },
	];
	const measured = shapes.map(() => new Map<Variant, number>());
	for (const [s, { batch, keys }] of shapes.entries()) {
		for (const variant of VARIANTS) {
			const table = `bench_bytes_${variant.table}_${variant.lease ? 'lease' : 'once'}`;
			await createTable(pool, table, variant.table);
			const settings: ClaimSettings = variant.lease
				? { claimMode: 'lease', options: { payloadFingerprint: 'canonicalJson' } }
				: {};
			const claimer = nodeClaimer(dist, credentials, table, true, {
				...settings,
				options: { ...settings.options, createTable: variant.table !== 'smallest' },
			});
			const complete = completeRunner(dist, credentials, table);
			for (let start = 0; start < keys; start += batch) {
				const ids = Array.from({ length: batch }, (_, i) => eventId(start + i));
				const [created] = await claimer.run(claimer.prepare(ids));
				check(created.length === batch, `bytes per key: ${variant.label}: a fresh key not New`);
				if (variant.lease) {
					const [completed] = await complete(created);
					check(
						completed.every((item) => (item.json.idempotency as { completed: boolean }).completed),
						`bytes per key: ${variant.label}: a Complete settled nothing`,
					);
				}
				if ((start + batch) % VACUUM_EVERY_KEYS === 0) await pool.query(`VACUUM ${table}`);
			}
			measured[s].set(variant, await mibPerMillion(pool, table, keys));
			await pool.query(`DROP TABLE ${table}`);
		}
		log(
			`bytes per key, ${batch}-item executions: ${VARIANTS.map((v) => measured[s].get(v)!.toFixed(1)).join(' / ')} MiB per million`,
		);
	}

	const ratio = (s: number, table: Table, lease: boolean) =>
		measured[s].get(VARIANTS.find((v) => v.table === table && v.lease === lease)!)! /
		measured[s].get(VARIANTS[0])!;
	const rows: BenchRow[] = shapes.flatMap(({ batch }, s) =>
		(['once', 'lease'] as const).map((mode) => {
			const value = ratio(s, 'compact', mode === 'lease');
			return {
				measure: `bytes per key, ${mode === 'once' ? 'Claim Once' : 'lease + fingerprint + Complete'}, ${batch}-item executions: compact table ÷ the smallest table`,
				value: formatRatio(value),
				ratio: value,
				target: `≤ ${TARGETS[mode]}×`,
				met: value <= TARGETS[mode],
			};
		}),
	);
	return {
		rows,
		details: [
			`The same Stripe-like \`evt:\` keys claimed through the built claim node on each table, ${shapes.map((shape) => `${shape.keys.toLocaleString('en')} in ${shape.batch}-item executions`).join(' and ')};`,
			'leased claims completed through the Key node after each execution; VACUUM every 2,000 keys, as autovacuum would run along.',
			'Table + index data (main forks, after a last VACUUM) per million keys:',
			'',
			`| table | ${shapes.map((shape) => `${shape.batch}-item executions`).join(' | ')} |`,
			`|---|${shapes.map(() => '---:').join('|')}|`,
			...VARIANTS.map(
				(variant) =>
					`| ${variant.label} | ${measured
						.map((perVariant) => {
							const mib = perVariant.get(variant)!;
							return `${mib.toFixed(1)} MiB (${formatRatio(mib / perVariant.get(VARIANTS[0])!)})`;
						})
						.join(' | ')} |`,
			),
		].join('\n'),
	};
};

async function createTable(pool: Pool, name: string, table: Table): Promise<void> {
	await pool.query(`DROP TABLE IF EXISTS ${name}`);
	// The compact table is made by the node itself, on its first execution.
	if (table === 'compact') return;
	const ddl =
		table === 'original'
			? ORIGINAL_LAYOUT_DDL(name)
			: [
					`CREATE TABLE ${name} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
					`CREATE INDEX ${name}_first_seen_idx ON ${name} (first_seen)`,
				];
	for (const statement of ddl) await pool.query(statement);
}

async function mibPerMillion(pool: Pool, table: string, keys: number): Promise<number> {
	return (await tableDataBytes(pool, table)) / MiB / (keys / 1_000_000);
}
