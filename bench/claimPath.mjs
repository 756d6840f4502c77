// Issue 5, part 1: one-item execution of the node vs a raw pooled `INSERT … ON CONFLICT (key) DO NOTHING
// RETURNING key` of the same key shape, same server and table, in alternating blocks. New and duplicate keys.
import { freshIds, keyOf, nodeClaimer } from './nodeClaims.mjs';
import { probeQueries } from './queryProbe.mjs';
import { elapsedMs, formatMs, formatRatio, mean, median, summarize } from './stats.mjs';

const TABLE = 'bench_claim_path';

export async function benchClaimPath({ dist, credentials, pool, quick, log, check }) {
	const rounds = quick ? 8 : 30;
	const block = quick ? 50 : 150;
	await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	const claimer = nodeClaimer(dist, credentials, TABLE);
	// The first execution creates the table; keep it out of the timing.
	await claimer.run(claimer.prepare(freshIds(1)));
	const rawSql = `INSERT INTO public.${TABLE} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`;

	// Time spent waiting for Postgres inside the node's executions; the rest is the node's JavaScript.
	const probe = probeQueries(dist.pg);
	const nodeWaits = { new: [], duplicate: [] };
	const runNodeBlock = async (ids, expectNew, waits = []) => {
		const contexts = ids.map((id) => claimer.prepare([id]));
		const latencies = [];
		for (const context of contexts) {
			probe.reset();
			const started = process.hrtime.bigint();
			const [created, duplicate] = await claimer.run(context);
			latencies.push(elapsedMs(started));
			waits.push(probe.read());
			check((expectNew ? created : duplicate).length === 1, `node ${expectNew ? 'new' : 'duplicate'} key routed wrongly`);
		}
		return latencies;
	};
	const runRawBlock = async (ids, expectNew) => {
		const latencies = [];
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

	const results = {};
	try {
		for (const path of ['new', 'duplicate']) {
			const expectNew = path === 'new';
			const idsFor = async () => {
				const ids = freshIds(block);
				if (!expectNew) await pool.query(`INSERT INTO public.${TABLE} (key) SELECT unnest($1::text[])`, [ids.map(keyOf)]);
				return ids;
			};
			// Warm-up: JIT, pool connections, plan caches.
			await runNodeBlock(await idsFor(), expectNew);
			await runRawBlock(await idsFor(), expectNew);
			const node = [];
			const raw = [];
			const pairRatios = [];
			for (let round = 0; round < rounds; round++) {
				// Alternate which side goes first so drift on the shared machine hits both alike.
				const order = round % 2 === 0 ? ['node', 'raw'] : ['raw', 'node'];
				const blockMeans = {};
				for (const side of order) {
					const ids = await idsFor();
					const latencies =
						side === 'node' ? await runNodeBlock(ids, expectNew, nodeWaits[path]) : await runRawBlock(ids, expectNew);
					(side === 'node' ? node : raw).push(...latencies);
					blockMeans[side] = mean(latencies);
				}
				pairRatios.push(blockMeans.node / blockMeans.raw);
			}
			results[path] = { node: summarize(node), raw: summarize(raw), ratio: median(pairRatios) };
			log(
				`claim path ${path}: node p50 ${formatMs(results[path].node.p50)} ms, raw p50 ${formatMs(results[path].raw.p50)} ms, ratio ${formatRatio(results[path].ratio)}`,
			);
		}
	} finally {
		probe.stop();
	}
	const split = (path) => {
		const waits = nodeWaits[path];
		const inPostgres = mean(waits.map((w) => w.waitMs));
		return { inPostgres, statements: mean(waits.map((w) => w.roundTrips)), inNode: results[path].node.mean - inPostgres };
	};

	const rows = ['new', 'duplicate'].map((path) => ({
		measure: `1-item claim, ${path} key: node ÷ raw INSERT … ON CONFLICT (time per claim)`,
		value: formatRatio(results[path].ratio),
		ratio: results[path].ratio,
		target: '≤ 1.15×',
		met: results[path].ratio <= 1.15,
	}));
	const table = [
		'| path | side | claims | mean ms | p50 ms | p95 ms | p99 ms | claims/s (1 client) |',
		'|---|---|---:|---:|---:|---:|---:|---:|',
		...['new', 'duplicate'].flatMap((path) =>
			['node', 'raw'].map((side) => {
				const s = results[path][side];
				return `| ${path} | ${side === 'node' ? 'node execute()' : 'raw pg'} | ${s.n} | ${formatMs(s.mean)} | ${formatMs(s.p50)} | ${formatMs(s.p95)} | ${formatMs(s.p99)} | ${Math.round(1000 / s.mean)} |`;
			}),
		),
	];
	return {
		title: '1. Claim path: node vs raw pg',
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
			...['new', 'duplicate'].map((path) => {
				const s = split(path);
				return `| ${path} | ${s.statements.toFixed(1)} | ${formatMs(s.inPostgres)} | ${formatMs(s.inNode)} | ${formatMs(results[path].raw.mean)} |`;
			}),
		].join('\n'),
	};
}
