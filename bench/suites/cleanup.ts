// Cleanup at scale: 5 million keys spread over 60 days (generate_series), then the Idempotency Key node's
// purge deletes the older half (one day per execution, batches of 10,000) while one client keeps claiming:
// purge time, table and index size per million keys, claim p99 during purge vs idle.
import type { IDataObject } from 'n8n-workflow';

import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { loadKeyTable, tableSizes, type TableSizes } from '../lib/keyTable';
import { freshIds, nodeClaimer, nodeRunner } from '../lib/nodeClaims';
import { elapsedMs, formatMiB, formatMs, summarize, timed } from '../lib/stats';

const TABLE = 'bench_cleanup';
const DAYS = 60;
const PURGE_OLDER_THAN_DAYS = 30;
const MIN_IDLE_WINDOW_MS = 300;
// The node's default batch size; BENCH_PURGE_BATCH tries another (to tune the default).
const PURGE_BATCH = Number(process.env.BENCH_PURGE_BATCH) || 10_000;

export const title = '5. Cleanup at scale';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const total = quick ? 200_000 : 5_000_000;
	log(`cleanup: loading ${total.toLocaleString('en')} keys over ${DAYS} days…`);
	// Rows look like the node's claim-once rows: Stripe-like key, first_seen, the 12 bytes of a claim ID.
	const { ms: loadMs, value: ref } = await timed(() =>
		loadKeyTable(dist, pool, TABLE, {
			count: total,
			days: DAYS,
			keyPrefix: 'evt:evt_',
			keySuffixSql: 'substr(md5(i::text), 1, 24)',
			claimIds: true,
		}),
	);
	const sizes = await tableSizes(pool, ref);
	const perMillion = (bytes: number) => bytes / (total / 1e6);
	log(
		`cleanup: loaded in ${(loadMs / 1000).toFixed(0)} s; total ${formatMiB(sizes.total)} (${formatMiB(perMillion(sizes.total))} per million keys)`,
	);

	const claimer = nodeClaimer(dist, credentials, TABLE);
	const keyNode = nodeRunner(dist, 'IdempotencyKey', credentials, TABLE);
	const purge = (olderThanDays: number, batchSize: number) =>
		keyNode([{ json: {} }], { operation: 'purge', olderThanDays, batchSize });
	const claimLoop = async (shouldStop: () => boolean) => {
		const latencies: number[] = [];
		while (!shouldStop()) {
			const context = claimer.prepare(freshIds(1));
			const started = process.hrtime.bigint();
			const [created] = await claimer.run(context);
			latencies.push(elapsedMs(started));
			check(created.length === 1, 'cleanup: a fresh key claimed during the benchmark was not New');
		}
		return latencies;
	};

	// Warm-up (pool, table preparation). Then the older half is purged one day at a time (olderThanDays 59,
	// 58, …, 30: one node execution each, like a daily schedule catching up), and after every purge an idle
	// window of the same length: claims during and between purges are measured side by side, so load from
	// elsewhere on the machine and checkpoints hit both alike.
	let warmupLeft = 200;
	await claimLoop(() => warmupLeft-- <= 0);
	const duringLatencies: number[] = [];
	const idleLatencies: number[] = [];
	const stepDays = quick ? 5 : 1;
	let purgeMs = 0;
	let deleted = 0;
	let batches = 0;
	let executions = 0;
	let cutoff: unknown;
	for (let days = DAYS - stepDays; days >= PURGE_OLDER_THAN_DAYS; days -= stepDays) {
		let purgeDone = false;
		const started = process.hrtime.bigint();
		const [output, latencies] = await Promise.all([
			purge(days, PURGE_BATCH).finally(() => (purgeDone = true)),
			claimLoop(() => purgeDone),
		]);
		const ms = elapsedMs(started);
		purgeMs += ms;
		duringLatencies.push(...latencies);
		const result = output[0][0].json as IDataObject & { deleted: number; batches: number };
		deleted += result.deleted;
		batches += result.batches;
		executions++;
		cutoff = result.cutoff;
		const idleUntil = Date.now() + Math.max(MIN_IDLE_WINDOW_MS, ms);
		idleLatencies.push(...(await claimLoop(() => Date.now() >= idleUntil)));
	}
	const idle = summarize(idleLatencies);
	const during = summarize(duringLatencies);
	log(
		`cleanup: ${executions} purges deleted ${deleted.toLocaleString('en')} keys in ${batches} statements, ${(purgeMs / 1000).toFixed(1)} s; claim p99 idle ${formatMs(idle.p99)} ms, during ${formatMs(during.p99)} ms`,
	);

	const { rows } = await pool.query(
		`SELECT count(*) FILTER (WHERE first_seen < $1)::int AS older, count(*)::int AS remaining FROM ${ref.qualified}`,
		[cutoff],
	);
	check(rows[0].older === 0, `purge left ${rows[0].older} keys older than its cutoff`);
	const claimed = 200 + idle.n + during.n;
	check(
		rows[0].remaining === total + claimed - deleted,
		`purge: ${rows[0].remaining} rows remain, expected ${total + claimed - deleted}`,
	);
	check(
		Math.abs(deleted - total / 2) <= total * 0.01,
		`purge deleted ${deleted} keys, expected about half of ${total}`,
	);
	const after = await tableSizes(pool, ref);
	await pool.query(`DROP TABLE ${ref.qualified}`);

	const p99Ratio = during.p99 / idle.p99;
	const sizeRow = (label: string, s: TableSizes, keys: number) =>
		`| ${label} | ${formatMiB(s.heap)} | ${formatMiB(s.pkey)} | ${formatMiB(s.firstSeen)} | ${formatMiB(s.total)} | ${formatMiB(s.total / (keys / 1e6))} |`;
	return {
		rows: [
			ratioRow('claim p99 while a purge runs ÷ claim p99 idle (interleaved)', p99Ratio, { max: 2 }),
			reportedRow(
				`purge of ${(deleted / 1e6).toFixed(2)} M of ${(total / 1e6).toFixed(1)} M keys, ${executions} executions, batches of ${PURGE_BATCH.toLocaleString('en')}`,
				`${(purgeMs / 1000).toFixed(1)} s`,
			),
			reportedRow('table + indexes per million keys', formatMiB(perMillion(sizes.total))),
		],
		details: [
			`${total.toLocaleString('en')} keys (\`evt:evt_\` + 24 hex chars, with a claim ID like the node writes) spread evenly over ${DAYS} days,`,
			`loaded with generate_series, indexes built afterwards, VACUUM ANALYZE (${(loadMs / 1000).toFixed(0)} s in all).`,
			`Purge = Idempotency Key node, operation purge, batchSize ${PURGE_BATCH.toLocaleString('en')}, run ${executions} times with olderThanDays`,
			`${DAYS - stepDays}, ${DAYS - 2 * stepDays}, … ${PURGE_OLDER_THAN_DAYS} (${stepDays} day(s) of keys each; together the older half), each followed by an`,
			`idle window as long as that purge took (at least ${MIN_IDLE_WINDOW_MS} ms).`,
			'',
			'| purge | |',
			'|---|---:|',
			`| deleted | ${deleted.toLocaleString('en')} keys in ${batches} statements over ${executions} executions |`,
			`| time | ${(purgeMs / 1000).toFixed(1)} s in all (${Math.round(deleted / (purgeMs / 1000)).toLocaleString('en')} keys/s, ${formatMs(purgeMs / executions)} ms per execution, ${formatMs(purgeMs / batches)} ms per statement) |`,
			'',
			'| sizes | heap | primary key | first_seen index | total | per million keys |',
			'|---|---:|---:|---:|---:|---:|',
			sizeRow(`after load (${(total / 1e6).toFixed(1)} M keys)`, sizes, total),
			sizeRow(
				`after purge, before VACUUM (${(rows[0].remaining / 1e6).toFixed(2)} M keys)`,
				after,
				rows[0].remaining,
			),
			'',
			'One client claiming fresh keys through the node (1 item per execution), sequentially:',
			'',
			'| claims | n | p50 ms | p95 ms | p99 ms | max ms |',
			'|---|---:|---:|---:|---:|---:|',
			`| idle (between purges) | ${idle.n} | ${formatMs(idle.p50)} | ${formatMs(idle.p95)} | ${formatMs(idle.p99)} | ${formatMs(idle.max)} |`,
			`| while a purge runs | ${during.n} | ${formatMs(during.p50)} | ${formatMs(during.p95)} | ${formatMs(during.p99)} | ${formatMs(during.max)} |`,
		].join('\n'),
	};
};
