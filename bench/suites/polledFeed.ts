// A polled feed: a poll of 1,000 items of which 990 came in the poll before, through the Idempotency Claim
// node (Key Source Polled Item, Value Is New; Count Repeat Deliveries off, its default there, and on) and
// through n8n's Remove Duplicates ("Remove Items Processed in Previous Executions", Value Is New), side by
// side in one n8n, beside a floor that remembers nothing and passes the 10 new items. Per poll: time (the
// webhook answers when the workflow has finished), write-ahead log (the whole server's, minus the
// floor's) and rows written in each store (pg_stat_user_tables). Then overlapping polls: 8 copies of one
// poll of the newest 100 items at the same moment per side; items passed twice = business rows − distinct
// items. The Idempotency Claim node also has a watermark side (Value Is Higher on the item's number).
import type { Pool } from 'pg';

import { parseFlatted } from '../../harness/n8n/flatted';
import { inN8n, ratioRow } from '../lib/benchmark';
import { runGroups } from '../lib/loadGenerator';
import { N8N_BENCH_SCHEMA, type BenchWorkflow } from '../lib/benchN8n';
import { rotatedRounds } from '../lib/rounds';
import { formatMs, median } from '../lib/stats';
import { timedWithWal } from '../lib/walMeter';

type Side =
	'polledFloor' | 'polledClaim' | 'polledCounting' | 'polledWatermark' | 'polledRemoveDuplicates';
const SIDES: Array<{ key: Side & BenchWorkflow; label: string; business: string }> = [
	{ key: 'polledFloor', label: 'floor (no deduplication)', business: 'floor' },
	{ key: 'polledClaim', label: 'Idempotency Claim (Polled Item)', business: 'claim' },
	{
		key: 'polledCounting',
		label: 'Idempotency Claim, Count Repeat Deliveries on',
		business: 'counting',
	},
	{
		key: 'polledWatermark',
		label: 'Idempotency Claim, Value Is Higher (watermark)',
		business: 'watermark',
	},
	{ key: 'polledRemoveDuplicates', label: 'Remove Duplicates', business: 'removeDuplicates' },
];
const DEDUPING = SIDES.filter((side) => side.key !== 'polledFloor');
/** The table each side remembers items in (Remove Duplicates: n8n's own, one JSON row per node). */
const STORES: Record<Side, string | null> = {
	polledFloor: null,
	polledClaim: 'public.bench_polled_claims',
	polledCounting: 'public.bench_polled_counting',
	polledWatermark: 'public.bench_polled_watermarks',
	polledRemoveDuplicates: `${N8N_BENCH_SCHEMA}.processed_data`,
};
const POLL_ITEMS = 1000;
const NEW_PER_POLL = 10;
/**
 * Copies of one poll sent at the same moment, each of the newest 100 items (the 10 new among them). Eight
 * 1,000-item polls at once starve n8n's main process on 2 cores long enough that its own database ping
 * fails and it answers 503 "Database is not ready!" (seen in a full run, on every side alike); with four,
 * n8n ran Remove Duplicates' executions one after the other and none overlapped.
 */
const OVERLAP = 8;
const OVERLAP_ITEMS = 100;
/** Postgres flushes a backend's table counters when it has been idle this long (PGSTAT_IDLE_INTERVAL). */
const STATS_SETTLE_MS = 11_000;

/**
 * Poll `p` of a side: the newest `size` of items p·10 … p·10+999 (`seq`, and `id` made of it), the 10 new
 * ones first, as a feed lists its newest first.
 */
function pollBody(side: Side, p: number, size = POLL_ITEMS): string {
	const items = Array.from({ length: size }, (_, i) => {
		const seq = p * NEW_PER_POLL + POLL_ITEMS - 1 - i;
		return { id: `${side}_${seq}`, seq };
	});
	return JSON.stringify({ items });
}

export const title = '4b. A polled feed: 1,000 items, 990 repeats';
export const run = inN8n(async ({ n8n, pool, quick, log, check }) => {
	const polls = quick ? 4 : 30;
	const overlapRounds = quick ? 2 : 10;
	await pool.query(
		'CREATE TABLE IF NOT EXISTS bench_polled_business (side text NOT NULL, item_id text NOT NULL)',
	);
	/** Sends poll `p` (`copies` times at once); returns the answers that were not 200, described. */
	const send = async (side: Side, p: number, copies = 1, size = POLL_ITEMS): Promise<string[]> => {
		const body = pollBody(side, p, size);
		const load = await runGroups([
			Array.from({ length: copies }, () => ({ url: n8n.url(side), body })),
		]);
		const failed = load.answers.filter((answer) => answer.status !== 200);
		if (failed.length === 0) return [];
		const why = await lastFailure(pool);
		return failed.map(
			(answer) => `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)} (${why})`,
		);
	};
	const sendOrThrow = async (side: Side, p: number) => {
		const [failure] = await send(side, p);
		if (failure) throw new Error(`${side}: poll ${p} answered ${failure}`);
	};

	// Poll 0 fills every side's history with 1,000 items (the first poll of a feed).
	for (const side of SIDES) await sendOrThrow(side.key, 0);
	const before = await storeCounters(pool);
	log(`polled feed: ${polls} polls per side of ${POLL_ITEMS} items, ${NEW_PER_POLL} new each…`);
	const perPoll = await rotatedRounds(polls, SIDES, (side, round) =>
		timedWithWal(pool, () => sendOrThrow(side.key, round + 1)),
	);
	const after = await storeCounters(pool);
	for (const [i, side] of SIDES.entries())
		log(`  ${side.key}: ${perPoll.map((round) => Math.round(round[i].ms)).join(', ')} ms per poll`);

	log(
		`polled feed: ${overlapRounds} rounds of ${OVERLAP} overlapping ${OVERLAP_ITEMS}-item polls per side…`,
	);
	// A poll that fails here is counted, not fatal: its items are simply not passed by it.
	const overlapFailures = Object.fromEntries(DEDUPING.map((side) => [side.key, [] as string[]]));
	const readiness = `${new URL(n8n.url('polledFloor')).origin}/healthz/readiness`;
	await rotatedRounds(overlapRounds, DEDUPING, async (side, round) => {
		await untilReady(readiness);
		const p = polls + 1 + round;
		overlapFailures[side.key].push(...(await send(side.key, p, OVERLAP, OVERLAP_ITEMS)));
	});
	for (const [side, failures] of Object.entries(overlapFailures))
		if (failures.length > 0)
			log(`${side}: ${failures.length} overlapping polls failed, first: ${failures[0]}`);
	const passes = await passesPerSide(pool);
	const expectedItems = POLL_ITEMS + NEW_PER_POLL * (polls + overlapRounds);
	const historyRow = await pool
		.query<{ bytes: number }>(
			`SELECT max(pg_column_size(value))::int AS bytes FROM ${STORES.polledRemoveDuplicates}`,
		)
		.then((result) => result.rows[0]?.bytes ?? null)
		.catch(() => null);

	const ms = (index: number) => median(perPoll.map((round) => round[index].ms));
	const wal = (index: number) => median(perPoll.map((round) => round[index].wal));
	const floorWal = wal(0);
	const written = (side: Side) => {
		const store = STORES[side];
		const delta = store && before[store] && after[store] ? after[store] - before[store] : NaN;
		return delta / polls;
	};
	for (const side of DEDUPING) {
		const { rows, distinct } = passes[side.business] ?? { rows: 0, distinct: 0 };
		log(`${side.key}: ${rows} business rows, ${distinct} distinct items of ${expectedItems}`);
	}
	const index = (key: Side) => SIDES.findIndex((side) => side.key === key);
	const none = { rows: 0, distinct: 0 };
	const claim = passes.claim ?? none;
	const removeDuplicates = passes.removeDuplicates ?? none;
	for (const [label, side, key] of [
		['Idempotency Claim', claim, 'polledClaim'],
		['Idempotency Claim (counting)', passes.counting ?? none, 'polledCounting'],
		['Idempotency Claim (watermark)', passes.watermark ?? none, 'polledWatermark'],
	] as const) {
		check(
			overlapFailures[key].length === 0,
			`${label}: ${overlapFailures[key].length} overlapping polls failed, first: ${overlapFailures[key][0]}`,
		);
		check(
			side.rows === side.distinct,
			`${label}: ${side.rows - side.distinct} items passed twice on a polled feed`,
		);
		check(
			side.distinct === expectedItems,
			`${label}: ${expectedItems - side.distinct} new items of the polled feed never passed`,
		);
	}
	const claimRows = written('polledClaim');
	return {
		rows: [
			{
				measure: `rows written per poll of ${POLL_ITEMS} items (${POLL_ITEMS - NEW_PER_POLL} repeats), Idempotency Claim`,
				value: claimRows.toFixed(1),
				target: `${NEW_PER_POLL} (the new items only)`,
				met: Math.round(claimRows) === NEW_PER_POLL,
			},
			ratioRow(
				'time per poll: Remove Duplicates ÷ Idempotency Claim workflow',
				ms(index('polledRemoveDuplicates')) / ms(index('polledClaim')),
			),
			{
				measure: `items passed twice, ${OVERLAP} overlapping ${OVERLAP_ITEMS}-item polls × ${overlapRounds}: Idempotency Claim / Remove Duplicates`,
				value: `${claim.rows - claim.distinct} / ${removeDuplicates.rows - removeDuplicates.distinct}`,
				target: '0 for Idempotency Claim (asserted)',
				met: claim.rows === claim.distinct,
			},
		],
		details: [
			`${polls} polls per side, sides in rotated order, after a first poll that fills each history; each poll ${POLL_ITEMS} items by webhook`,
			`Then ${overlapRounds} rounds of ${OVERLAP} copies of one ${OVERLAP_ITEMS}-item poll (its 10 new items among the newest 100) sent at the same moment, per side.`,
			`(Split Out → deduplication → a Postgres insert per item passed), ${NEW_PER_POLL} new, the other ${POLL_ITEMS - NEW_PER_POLL} from the poll before.`,
			'Executions are not saved (saveDataSuccessExecution: none) so that the WAL is the deduplication’s and the business step’s; the floor passes',
			"the same 10 items with no memory. WAL is the whole server's (median per poll); rows are pg_stat_user_tables inserts + updates of the",
			"store, per poll. Remove Duplicates keeps one JSON row per node (n8n's processed_data) and rewrites it whole on every poll.",
			'',
			'| workflow | ms per poll (median) | WAL per poll | WAL above the floor | rows written per poll | items passed twice (overlap) | overlapping polls that failed | items that passed |',
			'|---|---:|---:|---:|---:|---:|---:|---:|',
			...SIDES.map((side, i) => {
				const pass = passes[side.business];
				const overlap =
					side.key === 'polledFloor' || !pass
						? '–'
						: `${pass.rows - pass.distinct} of ${pass.distinct}`;
				const rowsWritten = written(side.key);
				const failedPolls =
					side.key === 'polledFloor'
						? '–'
						: `${overlapFailures[side.key].length} of ${OVERLAP * overlapRounds}`;
				return `| ${side.label} | ${formatMs(ms(i))} | ${formatKiB(wal(i))} | ${side.key === 'polledFloor' ? '–' : formatKiB(wal(i) - floorWal)} | ${Number.isNaN(rowsWritten) ? '–' : rowsWritten.toFixed(1)} | ${overlap} | ${failedPolls} | ${pass && side.key !== 'polledFloor' ? `${pass.distinct} / ${expectedItems}` : '–'} |`;
			}),
			'',
			`Remove Duplicates' history row at the end: ${historyRow === null ? 'not measured (n8n on SQLite)' : formatKiB(historyRow)} (stored size, compressed), rewritten by every poll.`,
			...DEDUPING.filter((side) => overlapFailures[side.key].length > 0).map(
				(side) =>
					`\n${side.label}: ${overlapFailures[side.key].length} overlapping polls failed, first: \`${overlapFailures[side.key][0].replace(/`/g, "'")}\``,
			),
		].join('\n'),
	};
});

/** Waits (up to 30 s) until n8n says it is ready again: each overlap round starts on a healthy n8n. */
async function untilReady(url: string): Promise<void> {
	const deadline = Date.now() + 30_000;
	while (Date.now() < deadline) {
		const ok = await fetch(url)
			.then((response) => response.ok)
			.catch(() => false);
		if (ok) return;
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

/** Where and why n8n's last failed execution stopped, from its saved run data. */
async function lastFailure(pool: Pool): Promise<string> {
	const { rows } = await pool
		.query<{ data: string }>(
			`SELECT d.data FROM ${N8N_BENCH_SCHEMA}.execution_entity e JOIN ${N8N_BENCH_SCHEMA}.execution_data d ON d."executionId" = e.id
			 WHERE e.status IN ('error', 'crashed') ORDER BY e.id DESC LIMIT 1`,
		)
		.catch(() => ({ rows: [] }));
	if (rows.length === 0) return '(no failed execution saved)';
	const { resultData } = parseFlatted(rows[0].data) as {
		resultData?: { lastNodeExecuted?: string; error?: { message?: string; description?: string } };
	};
	return `${resultData?.lastNodeExecuted}: ${resultData?.error?.message} ${resultData?.error?.description ?? ''}`;
}

const formatKiB = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Rows inserted + updated so far in each store, once every backend has flushed its counters. */
async function storeCounters(pool: Pool): Promise<Record<string, number>> {
	await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
	const stores = Object.values(STORES).filter((store): store is string => store !== null);
	const { rows } = await pool.query<{ store: string; written: number }>(
		`SELECT schemaname || '.' || relname AS store, (n_tup_ins + n_tup_upd)::float8 AS written
		 FROM pg_stat_user_tables WHERE schemaname || '.' || relname = ANY($1)`,
		[stores],
	);
	return Object.fromEntries(rows.map((row) => [row.store, row.written]));
}

async function passesPerSide(
	pool: Pool,
): Promise<Record<string, { rows: number; distinct: number }>> {
	const { rows } = await pool.query<{ side: string; rows: number; distinct: number }>(
		'SELECT side, count(*)::int AS rows, count(DISTINCT item_id)::int AS distinct FROM bench_polled_business GROUP BY side',
	);
	return Object.fromEntries(
		rows.map((row) => [row.side, { rows: row.rows, distinct: row.distinct }]),
	);
}
