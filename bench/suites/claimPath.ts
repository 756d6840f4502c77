// The claim path: a one-item execution of the node vs a raw pooled `INSERT … ON CONFLICT (key) DO NOTHING
// RETURNING key` of the same key shape, same server and table, in alternating blocks: a new key, a counted
// repeat (the default) and a read-only repeat (Count Repeat Deliveries off), each against the bare insert
// of the same kind of key (section 2b splits the difference step by step); and the same on the CPU
// path, a database where no commit waits for its WAL flush, so what is left is the work.
import type { Pool } from 'pg';

import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { ratioRow, type BenchContext, type Benchmark } from '../lib/benchmark';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import {
	elapsedMs,
	formatMs,
	formatRatio,
	mean,
	median,
	summarize,
	type Summary,
} from '../lib/stats';

const TABLE = 'bench_claim_path';
/** A database of the same server where every commit is asynchronous (`synchronous_commit = off`). */
const CPU_DATABASE = 'bench_claim_path_cpu';

type Path = 'new' | 'duplicate' | 'read-only duplicate';
const PATHS: Path[] = ['new', 'duplicate', 'read-only duplicate'];

/** Each path's target on the flush path: the node's time per claim ÷ the bare statement's. */
const TARGETS: Record<Path, number> = { new: 1.15, duplicate: 1.3, 'read-only duplicate': 1.1 };

const PATH_LABELS: Record<Path, string> = {
	new: 'new key',
	duplicate: 'repeat of a seen key, counted (the default)',
	'read-only duplicate': 'repeat of a seen key, read-only (Count Repeat Deliveries off)',
};

/** Alternating rounds per path, and claims per side in each. */
const sizes = (quick: boolean) => (quick ? { rounds: 8, block: 50 } : { rounds: 30, block: 150 });

interface PathResult {
	node: Summary;
	raw: Summary;
	ratio: number;
}

export const title = '1. Claim path: node vs raw pg';
export const run: Benchmark = async (context) => {
	const { pool, url, credentials, log } = context;
	const flush = await measurePaths(context, pool, credentials, 'flush path');
	let cpu: Record<Path, PathResult> | { skipped: string };
	const cpuSide = await cpuPathDatabase(pool, url, credentials).catch((error: Error) => ({
		skipped: error.message,
	}));
	if ('skipped' in cpuSide) {
		log(`claim path: no CPU path (${cpuSide.skipped})`);
		cpu = cpuSide;
	} else {
		try {
			cpu = await measurePaths(context, cpuSide.pool, cpuSide.credentials, 'CPU path');
		} finally {
			await cpuSide.drop();
		}
	}

	const rows = PATHS.map((path) =>
		ratioRow(
			`1-item claim, ${PATH_LABELS[path]}: node ÷ raw INSERT … ON CONFLICT DO NOTHING (time per claim)`,
			flush[path].ratio,
			{ max: TARGETS[path] },
		),
	);
	if (!('skipped' in cpu))
		for (const path of PATHS)
			rows.push(
				ratioRow(
					`1-item claim, ${PATH_LABELS[path]}, CPU path (no commit waits for a flush): node ÷ raw`,
					cpu[path].ratio,
					{ max: path === 'new' ? 1.15 : undefined },
				),
			);
	return { rows, details: details(context, flush, cpu) };
};

/** A database on the same server whose sessions commit without waiting for the WAL flush. */
async function cpuPathDatabase(pool: Pool, url: string, credentials: PostgresCredentials) {
	await pool.query(`DROP DATABASE IF EXISTS ${CPU_DATABASE}`);
	await pool.query(`CREATE DATABASE ${CPU_DATABASE}`);
	await pool.query(`ALTER DATABASE ${CPU_DATABASE} SET synchronous_commit = off`);
	const cpuUrl = new URL(url);
	cpuUrl.pathname = `/${CPU_DATABASE}`;
	const Pool = pool.constructor as new (config: object) => Pool;
	const cpuPool = new Pool({ connectionString: cpuUrl.toString(), max: 10 });
	cpuPool.on('error', () => undefined);
	return {
		pool: cpuPool,
		credentials: { ...credentials, database: CPU_DATABASE },
		drop: async () => {
			await cpuPool.end();
			// The node's pool for that database goes with it (FORCE ends its idle connections).
			await pool.query(`DROP DATABASE IF EXISTS ${CPU_DATABASE} WITH (FORCE)`);
		},
	};
}

async function measurePaths(
	{ dist, quick, log, check }: BenchContext,
	pool: Pool,
	credentials: PostgresCredentials,
	label: string,
): Promise<Record<Path, PathResult>> {
	const { rounds, block } = sizes(quick);
	await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	const counting = nodeClaimer(dist, credentials, TABLE);
	const readOnly = nodeClaimer(dist, credentials, TABLE, false);
	// The first execution creates the table; keep it out of the timing.
	await counting.run(counting.prepare(freshIds(1)));
	await readOnly.run(readOnly.prepare(freshIds(1)));
	const rawSql = `INSERT INTO public.${TABLE} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`;

	const runNodeBlock = async (path: Path, ids: string[]) => {
		const claimer = path === 'read-only duplicate' ? readOnly : counting;
		const expectNew = path === 'new';
		const contexts = ids.map((id) => claimer.prepare([id]));
		const latencies: number[] = [];
		for (const context of contexts) {
			const started = process.hrtime.bigint();
			const [created, duplicate] = await claimer.run(context);
			latencies.push(elapsedMs(started));
			check(
				(expectNew ? created : duplicate).length === 1,
				`node ${path} key routed wrongly (${label})`,
			);
		}
		return latencies;
	};
	const runRawBlock = async (path: Path, ids: string[]) => {
		const expectNew = path === 'new';
		const latencies: number[] = [];
		for (const id of ids) {
			const started = process.hrtime.bigint();
			const result = await pool.query(rawSql, [keyOf(id)]);
			latencies.push(elapsedMs(started));
			check(
				result.rowCount === (expectNew ? 1 : 0),
				`raw ${path} key returned ${result.rowCount} rows (${label})`,
			);
		}
		return latencies;
	};

	const results = {} as Record<Path, PathResult>;
	try {
		for (const path of PATHS) {
			const idsFor = async () => {
				const ids = freshIds(block);
				if (path !== 'new')
					await pool.query(`INSERT INTO public.${TABLE} (key) SELECT unnest($1::text[])`, [
						ids.map(keyOf),
					]);
				return ids;
			};
			// Warm-up: JIT, pool connections, plan caches.
			await runNodeBlock(path, await idsFor());
			await runRawBlock(path, await idsFor());
			const perRound = await rotatedRounds(rounds, ['node', 'raw'] as const, async (side) =>
				side === 'node' ? runNodeBlock(path, await idsFor()) : runRawBlock(path, await idsFor()),
			);
			results[path] = {
				node: summarize(perRound.flatMap(([node]) => node)),
				raw: summarize(perRound.flatMap(([, raw]) => raw)),
				ratio: median(perRound.map(([node, raw]) => mean(node) / mean(raw))),
			};
			log(
				`claim path ${path} (${label}): node p50 ${formatMs(results[path].node.p50)} ms, raw p50 ${formatMs(results[path].raw.p50)} ms, ratio ${formatRatio(results[path].ratio)}`,
			);
		}
	} finally {
		await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	}
	return results;
}

function details(
	{ quick }: BenchContext,
	flush: Record<Path, PathResult>,
	cpu: Record<Path, PathResult> | { skipped: string },
): string {
	const { rounds, block } = sizes(quick);
	const sides = (name: string, results: Record<Path, PathResult>) =>
		PATHS.flatMap((path) =>
			(['node', 'raw'] as const).map((side) => {
				const s = results[path][side];
				return `| ${name} | ${path} | ${side === 'node' ? 'node execute()' : 'raw pg'} | ${s.n} | ${formatMs(s.mean)} | ${formatMs(s.p50)} | ${formatMs(s.p95)} | ${formatMs(s.p99)} | ${Math.round(1000 / s.mean)} |`;
			}),
		);
	const withCpu = !('skipped' in cpu);
	return [
		`Sequential, one client, ${rounds} alternating rounds of ${block} claims per side and path; ratio = median over rounds of`,
		'(mean node time ÷ mean raw time) in that round. Raw = `pool.query(INSERT INTO t (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key)`',
		'on the same table (created by the node) with a pg.Pool of 10, of a new key or of a key inserted just before (a duplicate: it writes nothing).',
		'Node = `IdempotencyClaim.execute()` from dist/ on one webhook item (`evt:` + 24-char id, Raw Body on), items built outside the timer;',
		'a counted repeat updates `last_seen` and `deliveries` and commits without waiting for its flush (it claims nothing).',
		withCpu
			? `CPU path: the same on a database of the same server with \`ALTER DATABASE … SET synchronous_commit = off\` (both sides): no commit waits for its WAL flush, so the ratio is the work itself.`
			: `CPU path: not measured (${cpu.skipped}).`,
		'',
		'| path | key | side | claims | mean ms | p50 ms | p95 ms | p99 ms | claims/s (1 client) |',
		'|---|---|---|---:|---:|---:|---:|---:|---:|',
		...sides('flush', flush),
		...(withCpu ? sides('CPU', cpu) : []),
	].join('\n');
}
