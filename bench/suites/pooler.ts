// The claim through a transaction-mode pooler: 8 concurrent one-item node executions straight to
// Postgres and through a real PgBouncer (pool_mode = transaction, as in front of hosted Postgres), with the
// credential's default settings, in alternating blocks. Behind the pooler the node sends its claim as an
// unnamed statement (a named one would be missing on the next server connection); direct, it keeps the
// named, planned-once statement. Both sides must claim every key exactly once.
import type { Benchmark } from '../lib/benchmark';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatRate, formatRatio, median } from '../lib/stats';
import { TransactionPooler } from '../../harness/postgres/transactionPooler';

const TABLE = 'bench_pooler';
const CONCURRENCY = 8;

export const title = '1b. Claims through a transaction pooler';
export const run: Benchmark = async ({ dist, credentials, url, pool, quick, log, check }) => {
	if (!TransactionPooler.installed()) return { skipped: 'pgbouncer is not installed' };
	const rounds = quick ? 4 : 16;
	const block = quick ? 200 : 800;
	await pool.query(`DROP TABLE IF EXISTS public.${TABLE}`);
	const pooler = await TransactionPooler.start(url, CONCURRENCY);
	try {
		const sides = {
			direct: nodeClaimer(dist, credentials, TABLE),
			pooled: nodeClaimer(dist, { ...credentials, host: '127.0.0.1', port: pooler.port }, TABLE),
		};
		const runBlock = async (side: keyof typeof sides) => {
			const ids = freshIds(block);
			const contexts = ids.map((id) => sides[side].prepare([id]));
			let next = 0;
			let fresh = 0;
			const started = process.hrtime.bigint();
			await Promise.all(
				Array.from({ length: CONCURRENCY }, async () => {
					while (next < contexts.length) {
						const [created] = await sides[side].run(contexts[next++]);
						fresh += created.length;
					}
				}),
			);
			const perSecond = block / (elapsedMs(started) / 1000);
			check(fresh === block, `${side}: ${fresh} of ${block} new keys came out of New`);
			const { rows } = await pool.query<{ n: number }>(
				`SELECT count(*)::int AS n FROM public.${TABLE} WHERE key = ANY($1::text[])`,
				[ids.map(keyOf)],
			);
			check(rows[0].n === block, `${side}: ${rows[0].n} rows for ${block} keys`);
			return perSecond;
		};
		await runBlock('direct');
		await runBlock('pooled');
		const perRound = await rotatedRounds(rounds, ['direct', 'pooled'] as const, runBlock);
		const ratio = median(perRound.map(([direct, pooled]) => pooled / direct));
		const directRate = median(perRound.map(([direct]) => direct));
		const pooledRate = median(perRound.map(([, pooled]) => pooled));
		log(
			`pooler: direct ${formatRate(directRate)} claims/s, through PgBouncer ${formatRate(pooledRate)} claims/s`,
		);
		return {
			rows: [
				{
					measure: `1-item claims through PgBouncer (transaction mode) ÷ direct, ${CONCURRENCY} concurrent executions`,
					value: formatRatio(ratio),
					ratio,
					target: 'reported (must work)',
				},
			],
			details: [
				`${rounds} alternating rounds of ${block} one-item node executions per side, ${CONCURRENCY} at a time; PgBouncer with ${CONCURRENCY}`,
				'server connections. Medians per round: direct',
				`${formatRate(directRate)} claims/s, through the pooler ${formatRate(pooledRate)} claims/s; every key claimed once on both sides.`,
			].join(' '),
		};
	} finally {
		await pooler.stop();
	}
};
