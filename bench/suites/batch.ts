// Batches: 10,000 items in one execution — statements sent (round trips), keys/s against a raw `unnest`
// insert of 10,000 keys, and against claiming the same number of keys one execution per item.
import { ratioRow, type Benchmark } from '../lib/benchmark';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { countRoundTrips } from '../lib/queryProbe';
import { inRotatedOrder } from '../lib/rounds';
import { formatPercent, formatRate, median, timed } from '../lib/stats';

const TABLE = 'bench_batch';
const BATCH = 10_000;

export const title = '2. Batches of 10,000 items';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const rounds = quick ? 3 : 7;
	const perItemCount = quick ? 1_000 : 5_000;
	const claimer = nodeClaimer(dist, credentials, TABLE);
	await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	await claimer.run(claimer.prepare(freshIds(1)));
	const rawSql = `INSERT INTO public.${TABLE} (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key`;

	// Round trips for the three shapes a batch can have (the table is already prepared by then).
	const roundTripsOf = async (label: string, ids: string[], expectNew: number) => {
		const context = claimer.prepare(ids);
		const { value, roundTrips, statements } = await countRoundTrips(dist.pg, () =>
			claimer.run(context),
		);
		check(
			value[0].length === expectNew,
			`${label}: ${value[0].length} New items, expected ${expectNew}`,
		);
		check(value[0].length + value[1].length === ids.length, `${label}: items lost`);
		return { label, roundTrips, statements };
	};
	const allNew = await roundTripsOf('10,000 new keys', freshIds(BATCH), BATCH);
	const seen = freshIds(BATCH / 2);
	await claimer.run(claimer.prepare(seen));
	const trips = [
		allNew,
		await roundTripsOf(
			'5,000 new + 5,000 seen before',
			[...freshIds(BATCH / 2), ...seen],
			BATCH / 2,
		),
		await roundTripsOf('10,000 seen before', [...seen, ...seen], 0),
	];

	// keys/s: node batch vs raw unnest batch, alternating; fresh keys every time.
	const nodeRates: number[] = [];
	const rawRates: number[] = [];
	const jsonOnlyRates: number[] = [];
	const ratios: number[] = [];
	for (let round = 0; round < rounds + 1; round++) {
		const nodeContext = claimer.prepare(freshIds(BATCH));
		const jsonOnlyContext = claimer.prepareJsonOnly(freshIds(BATCH));
		const rawKeys = freshIds(BATCH).map(keyOf);
		const runNode = async () => {
			const { ms, value } = await timed(() => claimer.run(nodeContext));
			check(value[0].length === BATCH, `batch: ${value[0].length} of ${BATCH} fresh keys were New`);
			return BATCH / (ms / 1000);
		};
		const runRaw = async () => {
			const { ms, value } = await timed(() => pool.query(rawSql, [rawKeys]));
			check(value.rowCount === BATCH, `raw batch inserted ${value.rowCount} of ${BATCH}`);
			return BATCH / (ms / 1000);
		};
		const runJsonOnly = async () => {
			const { ms } = await timed(() => claimer.run(jsonOnlyContext));
			return BATCH / (ms / 1000);
		};
		const [nodeRate, rawRate] = await inRotatedOrder(round, [runNode, runRaw], (run) => run());
		const jsonOnly = await runJsonOnly();
		if (round === 0) continue; // warm-up
		nodeRates.push(nodeRate);
		rawRates.push(rawRate);
		jsonOnlyRates.push(jsonOnly);
		ratios.push(nodeRate / rawRate);
	}
	const batchVsRaw = median(ratios);

	// One execution per item, sequential (what a workflow without batching does).
	const perItemIds = freshIds(perItemCount);
	const perItemContexts = perItemIds.map((id) => claimer.prepare([id]));
	const { ms: perItemMs } = await timed(async () => {
		for (const context of perItemContexts) {
			const [created] = await claimer.run(context);
			check(created.length === 1, 'per-item claim of a fresh key was not New');
		}
	});
	const perItemRate = perItemCount / (perItemMs / 1000);
	const batchVsPerItem = median(nodeRates) / perItemRate;
	log(
		`batch: node ${formatRate(median(nodeRates))} keys/s, raw ${formatRate(median(rawRates))} keys/s, per item ${formatRate(perItemRate)} keys/s`,
	);

	const maxTrips = Math.max(...trips.map((trip) => trip.roundTrips));
	return {
		rows: [
			{
				measure: 'statements per 10,000-item execution (new / mixed / all seen)',
				value: trips.map((t) => t.roundTrips).join(' / '),
				target: '≤ 2',
				met: maxTrips <= 2,
			},
			{
				measure: '10,000-item execution: node keys/s ÷ raw `unnest` insert keys/s',
				value: formatPercent(batchVsRaw),
				target: '≥ 80 %',
				met: batchVsRaw >= 0.8,
			},
			ratioRow('10,000-item execution vs one execution per item (keys/s)', batchVsPerItem, {
				min: 20,
			}),
		],
		details: [
			`${rounds} alternating rounds after one warm-up round, fresh keys each time; medians shown.`,
			'',
			'| what | keys/s (median) |',
			'|---|---:|',
			`| node, one execution of 10,000 webhook items (Raw Body on) | ${formatRate(median(nodeRates))} |`,
			`| node, one execution of 10,000 json-only items (Raw Body off) | ${formatRate(median(jsonOnlyRates))} |`,
			`| raw \`INSERT … SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key\`, 10,000 keys | ${formatRate(median(rawRates))} |`,
			`| node, one execution per item, ${perItemCount.toLocaleString('en')} items sequentially | ${formatRate(perItemRate)} |`,
			"(Section 2b splits a 10,000-item execution's time: its statement sent directly, then its execute().)",
			'',
			'Statements the node sent per execution (counted on pg `Client#query`, table already prepared):',
			'',
			'| batch | statements | what |',
			'|---|---:|---|',
			...trips.map(
				(t) =>
					`| ${t.label} | ${t.roundTrips} | ${t.statements.map((s) => `\`${s.replace(/\s+/g, ' ').slice(0, 48)}…\``).join('<br>')} |`,
			),
		].join('\n'),
	};
};
