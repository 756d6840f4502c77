// The claim path: a one-item execution of the node vs a raw pooled `INSERT … ON CONFLICT (key) DO NOTHING
// RETURNING key` of the same key shape, same server and table, in alternating blocks; new and duplicate
// keys; and where the node's time goes (waiting for Postgres vs its own JavaScript).
import type { Benchmark } from './benchmark';
import { freshIds, keyOf, nodeClaimer } from './nodeClaims';
import { probeQueries, type ProbeReading } from './queryProbe';
import { rotatedRounds } from './rounds';
import { elapsedMs, formatMs, formatRatio, mean, median, summarize, type Summary } from './stats';

const TABLE = 'bench_claim_path';

type Path = 'new' | 'duplicate';
const PATHS: Path[] = ['new', 'duplicate'];

export const benchClaimPath: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const rounds = quick ? 8 : 30;
	const block = quick ? 50 : 150;
	await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	const claimer = nodeClaimer(dist, credentials, TABLE);
	// The first execution creates the table; keep it out of the timing.
	await claimer.run(claimer.prepare(freshIds(1)));
	const rawSql = `INSERT INTO public.${TABLE} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`;

	// Time spent waiting for Postgres inside the node's executions; the rest is the node's JavaScript.
	const probe = probeQueries(dist.pg);
	const nodeWaits: Record<Path, ProbeReading[]> = { new: [], duplicate: [] };
	const runNodeBlock = async (ids: string[], expectNew: boolean, waits: ProbeReading[] = []) => {
		const contexts = ids.map((id) => claimer.prepare([id]));
		const latencies: number[] = [];
		for (const context of contexts) {
			probe.reset();
			const started = process.hrtime.bigint();
			const [created, duplicate] = await claimer.run(context);
			latencies.push(elapsedMs(started));
			waits.push(probe.read());
			check(
				(expectNew ? created : duplicate).length === 1,
				`node ${expectNew ? 'new' : 'duplicate'} key routed wrongly`,
			);
		}
		return latencies;
	};
	const runRawBlock = async (ids: string[], expectNew: boolean) => {
		const latencies: number[] = [];
		for (const id of ids) {
			const started = process.hrtime.bigint();
			const result = await pool.query(rawSql, [keyOf(id)]);
			latencies.push(elapsedMs(started));
			check(
				result.rowCount === (expectNew ? 1 : 0),
				`raw ${expectNew ? 'new' : 'duplicate'} key returned ${result.rowCount} rows`,
			);
		}
		return latencies;
	};

	const results = {} as Record<Path, { node: Summary; raw: Summary; ratio: number }>;
	try {
		for (const path of PATHS) {
			const expectNew = path === 'new';
			const idsFor = async () => {
				const ids = freshIds(block);
				if (!expectNew)
					await pool.query(`INSERT INTO public.${TABLE} (key) SELECT unnest($1::text[])`, [
						ids.map(keyOf),
					]);
				return ids;
			};
			// Warm-up: JIT, pool connections, plan caches.
			await runNodeBlock(await idsFor(), expectNew);
			await runRawBlock(await idsFor(), expectNew);
			const perRound = await rotatedRounds(rounds, ['node', 'raw'] as const, async (side) =>
				side === 'node'
					? runNodeBlock(await idsFor(), expectNew, nodeWaits[path])
					: runRawBlock(await idsFor(), expectNew),
			);
			results[path] = {
				node: summarize(perRound.flatMap(([node]) => node)),
				raw: summarize(perRound.flatMap(([, raw]) => raw)),
				ratio: median(perRound.map(([node, raw]) => mean(node) / mean(raw))),
			};
			log(
				`claim path ${path}: node p50 ${formatMs(results[path].node.p50)} ms, raw p50 ${formatMs(results[path].raw.p50)} ms, ratio ${formatRatio(results[path].ratio)}`,
			);
		}
	} finally {
		probe.stop();
	}
	const split = (path: Path) => {
		const waits = nodeWaits[path];
		const inPostgres = mean(waits.map((w) => w.waitMs));
		return {
			inPostgres,
			statements: mean(waits.map((w) => w.roundTrips)),
			inNode: results[path].node.mean - inPostgres,
		};
	};

	const rows = PATHS.map((path) => ({
		measure: `1-item claim, ${path} key: node ÷ raw INSERT … ON CONFLICT (time per claim)`,
		value: formatRatio(results[path].ratio),
		ratio: results[path].ratio,
		target: '≤ 1.15×',
		met: results[path].ratio <= 1.15,
	}));
	const table = [
		'| path | side | claims | mean ms | p50 ms | p95 ms | p99 ms | claims/s (1 client) |',
		'|---|---|---:|---:|---:|---:|---:|---:|',
		...PATHS.flatMap((path) =>
			(['node', 'raw'] as const).map((side) => {
				const s = results[path][side];
				return `| ${path} | ${side === 'node' ? 'node execute()' : 'raw pg'} | ${s.n} | ${formatMs(s.mean)} | ${formatMs(s.p50)} | ${formatMs(s.p95)} | ${formatMs(s.p99)} | ${Math.round(1000 / s.mean)} |`;
			}),
		),
	];
	return {
		rows,
		details: [
			`Sequential, one client, ${rounds} alternating rounds of ${block} claims per side and path; ratio = median over rounds of`,
			'(mean node time ÷ mean raw time) in that round. Raw = `pool.query(INSERT INTO t (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key)`',
			'on the same table (created by the node) with a pg.Pool of 10. Node = `IdempotencyClaim.execute()` from dist/ on one webhook item',
			'(`evt:` + 24-char id, Raw Body on), items built outside the timer.',
			'',
			...table,
			'',
			'Where the node\'s time goes (mean per execution; "waiting for Postgres" is measured around pg `Client#query`):',
			'',
			'| path | statements | waiting for Postgres ms | node JavaScript ms | raw pg total ms |',
			'|---|---:|---:|---:|---:|',
			...PATHS.map((path) => {
				const s = split(path);
				return `| ${path} | ${s.statements.toFixed(1)} | ${formatMs(s.inPostgres)} | ${formatMs(s.inNode)} | ${formatMs(results[path].raw.mean)} |`;
			}),
		].join('\n'),
	};
};
