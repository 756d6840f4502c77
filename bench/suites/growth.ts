// Claims as the table grows: the node's claim (Claim Once) on tables already holding 0, 1 M, 10 M and
// 30 M keys (--quick: 0, 20,000, 100,000), 1 item per execution and 100-item batches: new keys, repeats
// of recent keys (what provider retries are) and repeats of keys up to 30 days old, counted or read-only.
// All tables are loaded first, then measured in interleaved rounds, so load from elsewhere on the machine
// hits every size alike. Also table + indexes per million keys at each size.
import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { LOADED_ID_SUFFIX_SQL, loadedId, loadKeyTable, tableSizes } from '../lib/keyTable';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { formatMiB, timed } from '../lib/stats';
import { timedWithWal } from '../lib/walMeter';

const TARGET_RATIO = 0.8;

type Keys = 'new' | 'recent' | 'old';

interface Shape {
	label: string;
	batch: number;
	keys: Keys;
	/** Count Repeat Deliveries: a repeat updates its row, or only reads it. */
	countRepeats: boolean;
}

const shape = (label: string, batch: number, keys: Keys, countRepeats = true): Shape => ({
	label,
	batch,
	keys,
	countRepeats,
});
const SHAPES: Shape[] = [
	shape('1 item, new key', 1, 'new'),
	shape('1 item, repeat of a recent key', 1, 'recent'),
	shape('1 item, repeat of a key up to 30 days old', 1, 'old'),
	shape('100 items, new keys', 100, 'new'),
	shape('100 items, repeats of recent keys', 100, 'recent'),
	shape('100 items, repeats of keys up to 30 days old', 100, 'old'),
	shape(
		'100 items, repeats of keys up to 30 days old, read-only (Count Repeat Deliveries off)',
		100,
		'old',
		false,
	),
];

const pick = <T>(from: T[], count: number): T[] =>
	Array.from({ length: count }, () => from[Math.floor(Math.random() * from.length)]);

export const title = '5b. Claims as the table grows';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const sizes = quick ? [0, 20_000, 100_000] : [0, 1_000_000, 10_000_000, 30_000_000];
	const rounds = quick ? 3 : 5;
	const keysPerRound = quick ? 300 : 2_000;
	const tables = sizes.map((size) => `bench_growth_${size}`);
	const perMillion: number[] = [];
	for (const [index, size] of sizes.entries()) {
		log(`growth: loading ${size.toLocaleString('en')} keys…`);
		// Rows like completed claims, keys in loadedId's form.
		const { ms, value: ref } = await timed(() =>
			loadKeyTable(dist, pool, tables[index], {
				count: size,
				days: 30,
				keyPrefix: keyOf('evt_'),
				keySuffixSql: LOADED_ID_SUFFIX_SQL,
			}),
		);
		perMillion.push(size === 0 ? NaN : (await tableSizes(pool, ref)).total / (size / 1e6));
		log(`growth: ${size.toLocaleString('en')} keys loaded in ${(ms / 1000).toFixed(0)} s`);
	}

	const claimers = tables.map((table) => ({
		counting: nodeClaimer(dist, credentials, table),
		readOnly: nodeClaimer(dist, credentials, table, false),
	}));
	// Warm-up: pools, table preparation, prepared statements. These keys are every table's first recent
	// keys; the new keys each table claims later join its own.
	const warmIds = freshIds(keysPerRound);
	const recent = sizes.map(() => [...warmIds]);
	for (const claimer of claimers) {
		await claimer.counting.run(claimer.counting.prepare(warmIds));
		await claimer.readOnly.run(claimer.readOnly.prepare(warmIds.slice(0, 100)));
	}
	const idsFor = (keys: Keys, sizeIndex: number, count: number): string[] => {
		if (keys === 'new') return freshIds(count);
		// The empty table has no old keys: its repeats are always of keys claimed minutes ago.
		if (keys === 'recent' || sizes[sizeIndex] === 0) return pick(recent[sizeIndex], count);
		return Array.from({ length: count }, () =>
			loadedId(1 + Math.floor(Math.random() * sizes[sizeIndex])),
		);
	};

	// keys, seconds and WAL bytes per shape per size, summed over rounds
	const keys = SHAPES.map(() => sizes.map(() => 0));
	const seconds = SHAPES.map(() => sizes.map(() => 0));
	const walBytes = SHAPES.map(() => sizes.map(() => 0));
	for (let round = 0; round < rounds; round++) {
		for (const [shapeIndex, shape] of SHAPES.entries()) {
			const executions = Math.max(1, Math.floor(keysPerRound / shape.batch));
			for (let sizeIndex = 0; sizeIndex < sizes.length; sizeIndex++) {
				const { counting, readOnly } = claimers[sizeIndex];
				const claimer = shape.countRepeats ? counting : readOnly;
				const ids = Array.from({ length: executions }, () =>
					idsFor(shape.keys, sizeIndex, shape.batch),
				);
				const contexts = ids.map((batch) => claimer.prepare(batch));
				let wrong = 0;
				const { ms, wal } = await timedWithWal(pool, async () => {
					for (const context of contexts) {
						const [created, duplicates] = await claimer.run(context);
						if (shape.keys === 'new' ? duplicates.length > 0 : created.length > 0) wrong++;
					}
				});
				walBytes[shapeIndex][sizeIndex] += wal;
				check(
					wrong === 0,
					`growth: ${shape.label} on ${tables[sizeIndex]} routed ${wrong} executions wrongly`,
				);
				keys[shapeIndex][sizeIndex] += executions * shape.batch;
				seconds[shapeIndex][sizeIndex] += ms / 1000;
				if (shape.keys === 'new') recent[sizeIndex].push(...ids.flat());
			}
		}
		log(`growth: round ${round + 1}/${rounds} done`);
	}

	const rate = (shapeIndex: number, sizeIndex: number) =>
		keys[shapeIndex][sizeIndex] / seconds[shapeIndex][sizeIndex];
	const largest = sizes.length - 1;
	const sizeLabel = (size: number) => (size >= 1e6 ? `${size / 1e6} M` : size.toLocaleString('en'));
	const rows = SHAPES.map((shape, shapeIndex) => {
		const row = ratioRow(
			`${shape.label}: claims/s with ${sizeLabel(sizes[largest])} keys ÷ empty table`,
			rate(shapeIndex, largest) / rate(shapeIndex, 0),
			{ min: quick ? undefined : TARGET_RATIO },
		);
		return quick ? { ...row, target: 'reported (quick sizes)' } : row;
	});
	rows.push(
		reportedRow(
			`table + indexes per million keys at ${sizeLabel(sizes[largest])} keys`,
			formatMiB(perMillion[largest]),
		),
	);
	for (const table of tables) await pool.query(`DROP TABLE IF EXISTS ${table}`);
	const shapeRows = (unit: string, perShapeAndSize: (shape: number, size: number) => number) =>
		SHAPES.map(
			(shape, shapeIndex) =>
				`| ${shape.label} (${unit}) | ${sizes.map((_, sizeIndex) => Math.round(perShapeAndSize(shapeIndex, sizeIndex)).toLocaleString('en')).join(' | ')} |`,
		);
	return {
		rows,
		details: [
			`Claim Once through the node's execute(), repeats counted unless the shape says read-only; ${rounds} interleaved rounds of ~${keysPerRound.toLocaleString('en')} keys per shape and size. ` +
				"Recent keys: keys the table's own claims of this run inserted. Old keys: drawn evenly from the loaded keys (first seen over 30 days). " +
				'WAL per key: bytes of write-ahead log the claims wrote (the whole server: other activity is counted too).',
			'',
			`| shape | ${sizes.map((size) => `${sizeLabel(size)} keys`).join(' | ')} |`,
			`|---|${sizes.map(() => '---:').join('|')}|`,
			...shapeRows('keys/s', rate),
			...shapeRows('WAL bytes per key', (shape, size) => walBytes[shape][size] / keys[shape][size]),
			`| table + indexes per million keys | ${perMillion.map((bytes) => (Number.isNaN(bytes) ? '–' : formatMiB(bytes))).join(' | ')} |`,
		].join('\n'),
	};
};
