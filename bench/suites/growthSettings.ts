// Repeats of old keys on a big table, and what the server's operator can set about them: the shapes of
// section 5b that fall short on a table of 30 M keys (--quick: 100,000), measured on a server of this
// benchmark's own under its default settings and then with one setting changed at a time: wal_compression,
// checkpoints spaced further apart, shared_buffers that hold the table. Every variant restarts the server,
// warms its buffers (pg_prewarm) and begins after a checkpoint, then measures the big and an empty table
// in interleaved rounds.
import type { Pool } from 'pg';

import { RestartablePostgres } from '../../harness/postgres/restartablePostgres';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import type { Benchmark, BenchRow } from '../lib/benchmark';
import { LOADED_ID_SUFFIX_SQL, loadedId, loadKeyTable, tableSizes } from '../lib/keyTable';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { formatMiB, formatRatio, timed } from '../lib/stats';
import { timedWithWal } from '../lib/walMeter';

const TARGET_RATIO = 0.8;
const BIG = 'bench_old_keys_big';
const EMPTY = 'bench_old_keys_empty';

interface Shape {
	label: string;
	batch: number;
	countRepeats: boolean;
}

const SHAPES: Shape[] = [
	{ label: '1 item, repeat of a key up to 30 days old', batch: 1, countRepeats: true },
	{ label: '100 items, repeats of keys up to 30 days old', batch: 100, countRepeats: true },
	{
		label: '100 items, repeats of keys up to 30 days old, read-only',
		batch: 100,
		countRepeats: false,
	},
];

interface Variant {
	label: (quick: boolean) => string;
	/** Server settings this variant changes from the defaults. */
	settings: (quick: boolean, compression: string) => Record<string, string>;
	/** What it changes in the table, before it is measured (the last variant: it stays). */
	table?: string[];
}

const VARIANTS: Variant[] = [
	{
		label: (quick) =>
			`defaults (shared_buffers ${quick ? '8 MB' : '128 MB'}, wal_compression off, checkpoint_timeout 5 min, max_wal_size 1 GB)`,
		// --quick: buffers smaller than its table, as 128 MB are for 30 M keys.
		settings: (quick) => ({ shared_buffers: quick ? '8MB' : '128MB' }),
	},
	{
		label: () => 'wal_compression on (full-page images compressed)',
		settings: (_quick, compression) => ({ wal_compression: compression }),
	},
	{
		label: () => 'checkpoints 30 min apart (checkpoint_timeout 30 min, max_wal_size 16 GB)',
		settings: () => ({ checkpoint_timeout: '30min', max_wal_size: '16GB' }),
	},
	{
		label: (quick) => `shared_buffers that hold the table (${quick ? '256 MB' : '6 GB'})`,
		settings: (quick) => ({ shared_buffers: quick ? '256MB' : '6GB' }),
	},
	{
		label: () =>
			'table fillfactor 90, rewritten (VACUUM FULL): room on each page for a repeat to update its row in place',
		settings: () => ({}),
		table: [`ALTER TABLE ${BIG} SET (fillfactor = 90)`, `VACUUM FULL ${BIG}`],
	},
];

export const title = '5c. Old keys and server settings';
export const run: Benchmark = async ({ dist, quick, log, check }) => {
	// BENCH_OLD_KEYS tries another size (development).
	const size = Number(process.env.BENCH_OLD_KEYS) || (quick ? 100_000 : 30_000_000);
	const rounds = quick ? 2 : 4;
	const keysPerRound = quick ? 300 : 2_000;
	const server = await RestartablePostgres.start({
		fsync: 'on',
		...VARIANTS[0].settings(quick, 'off'),
	});
	let pool: Pool | undefined;
	const connect = async () => {
		await pool?.end();
		await dist.poolRegistry.closeAllPools();
		pool = new dist.pg.Pool({ connectionString: server.url, max: 2 });
		pool.on('error', () => undefined);
		return pool;
	};
	try {
		const admin = await connect();
		const compression = await admin
			.query("SET wal_compression = 'lz4'")
			.then(() => 'lz4')
			.catch(() => 'pglz');
		await admin.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
		log(`old keys and settings: loading ${size.toLocaleString('en')} keys…`);
		const { ms: loadMs, value: big } = await timed(() =>
			loadKeyTable(dist, admin, BIG, {
				count: size,
				days: 30,
				keyPrefix: keyOf('evt_'),
				keySuffixSql: LOADED_ID_SUFFIX_SQL,
			}),
		);
		const bigBytes = (await tableSizes(admin, big)).total;
		log(`old keys and settings: loaded in ${(loadMs / 1000).toFixed(0)} s, ${formatMiB(bigBytes)}`);
		await loadKeyTable(dist, admin, EMPTY, { count: 0, days: 30, keyPrefix: '', keySuffixSql: '' });

		const credentials = credentialsFromUrl(server.url);
		const claimers = [EMPTY, BIG].map((table) => ({
			counting: nodeClaimer(dist, credentials, table),
			readOnly: nodeClaimer(dist, credentials, table, false),
		}));
		// The empty table's repeats are of keys it claimed a moment before (its only keys), as in 5b, but
		// distinct within a batch, as the big table's random old keys are.
		const recent = freshIds(keysPerRound);
		const idsFor = (table: number, count: number) =>
			table === 0
				? shuffled(recent).slice(0, count)
				: Array.from({ length: count }, () => loadedId(1 + Math.floor(Math.random() * size)));

		const measured: Array<{ rates: number[][]; wal: number[][] }> = [];
		const defaults = {
			...VARIANTS[0].settings(quick, compression),
			wal_compression: 'off',
			checkpoint_timeout: '5min',
			max_wal_size: '1GB',
		};
		for (const variant of VARIANTS) {
			await server.restartWith({ ...defaults, ...variant.settings(quick, compression) });
			const db = await connect();
			for (const statement of variant.table ?? []) await db.query(statement);
			await db.query(`SELECT pg_prewarm($1), pg_prewarm($2), pg_prewarm($3)`, [
				big.qualified,
				`public.${BIG}_pkey`,
				`public.${big.firstSeenIndex}`,
			]);
			await db.query('CHECKPOINT');
			for (const claimer of claimers)
				await claimer.counting.run(claimer.counting.prepare(recent.slice(0, 100)));
			await claimers[0].counting.run(claimers[0].counting.prepare(recent));
			const keys = SHAPES.map(() => [0, 0]);
			const seconds = SHAPES.map(() => [0, 0]);
			const wal = SHAPES.map(() => [0, 0]);
			for (let round = 0; round < rounds; round++) {
				for (const [shapeIndex, shape] of SHAPES.entries()) {
					for (const table of [0, 1]) {
						const claimer = shape.countRepeats
							? claimers[table].counting
							: claimers[table].readOnly;
						const executions = Math.max(1, Math.floor(keysPerRound / shape.batch));
						const contexts = Array.from({ length: executions }, () =>
							claimer.prepare(idsFor(table, shape.batch)),
						);
						let wrong = 0;
						const run = await timedWithWal(db, async () => {
							for (const context of contexts) if ((await claimer.run(context))[0].length) wrong++;
						});
						check(wrong === 0, `old keys and settings: ${shape.label} routed a repeat to New`);
						keys[shapeIndex][table] += executions * shape.batch;
						seconds[shapeIndex][table] += run.ms / 1000;
						wal[shapeIndex][table] += run.wal;
					}
				}
			}
			const rates = keys.map((perTable, s) => perTable.map((n, t) => n / seconds[s][t]));
			measured.push({
				rates,
				wal: wal.map((perTable, s) => perTable.map((b, t) => b / keys[s][t])),
			});
			log(
				`old keys and settings: ${variant.label(quick)}: ${SHAPES.map((_, s) => formatRatio(rates[s][1] / rates[s][0])).join(', ')}`,
			);
		}

		const ratio = (variant: number, shape: number) =>
			measured[variant].rates[shape][1] / measured[variant].rates[shape][0];
		const best = (shape: number) =>
			VARIANTS.map((_, v) => v).reduce((a, b) => (ratio(b, shape) > ratio(a, shape) ? b : a));
		const sizeLabel = size >= 1e6 ? `${size / 1e6} M` : size.toLocaleString('en');
		const rows: BenchRow[] = SHAPES.map((shape, s) => ({
			measure: `${shape.label}: claims/s with ${sizeLabel} keys ÷ empty table, defaults; the best setting`,
			value: `${formatRatio(ratio(0, s))}; ${formatRatio(ratio(best(s), s))} (${VARIANTS[best(s)].label(quick).replace(/ \(.*/, '')})`,
			target: quick ? 'reported (quick sizes)' : `≥ ${TARGET_RATIO}×`,
			met: quick ? undefined : ratio(best(s), s) >= TARGET_RATIO,
			ratio: ratio(best(s), s),
		}));
		const cell = (v: number, s: number) =>
			`${formatRatio(ratio(v, s))} (${Math.round(measured[v].rates[s][1]).toLocaleString('en')}/s, ${Math.round(measured[v].wal[s][1]).toLocaleString('en')} B WAL)`;
		return {
			rows,
			details: [
				`A server of this benchmark's own (the same PostgreSQL, fsync on), a table of ${sizeLabel} keys first seen over 30 days`,
				`(${formatMiB(bigBytes)} with its indexes) and an empty one. Each variant restarts the server with the defaults and its row's one change,`,
				`warms its buffers with pg_prewarm, checkpoints, then runs ${rounds} interleaved rounds of ~${keysPerRound.toLocaleString('en')} keys per shape`,
				'and table. Each cell: claims/s on the big table ÷ on the empty one (whose repeats are keys it claimed a moment before),',
				`then the big table's claims/s and WAL bytes per key. wal_compression here: ${compression}.`,
				'',
				`| settings | ${SHAPES.map((shape) => shape.label).join(' | ')} |`,
				`|---|${SHAPES.map(() => '---:').join('|')}|`,
				...VARIANTS.map(
					(variant, v) =>
						`| ${variant.label(quick)} | ${SHAPES.map((_, s) => cell(v, s)).join(' | ')} |`,
				),
			].join('\n'),
		};
	} finally {
		await pool?.end().catch(() => undefined);
		await dist.poolRegistry.closeAllPools().catch(() => undefined);
		await server.stop();
	}
};

function shuffled<T>(values: T[]): T[] {
	const copy = [...values];
	for (let i = copy.length - 1; i > 0; i--) {
		const j = Math.floor(Math.random() * (i + 1));
		[copy[i], copy[j]] = [copy[j], copy[i]];
	}
	return copy;
}
