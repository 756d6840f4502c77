// The inbox's operator tools at scale, at the node: Requeue Kept Events and Discard Kept Events on 100,000
// dead letters beside a claim table of 10 M completed keys, against what an operator had before (Requeue
// Dead Letter, one key per execution; List Stuck Claims feeding every dead letter to one Requeue Dead
// Letter); then Summarize Inbox, the every-minute read, with 10,000 and 100,000 events in flight, beside
// the same counts as a plain join, planned as Postgres likes (without the node's OFFSET 0 fence).
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import type { Pool } from 'pg';

import type { Benchmark } from '../lib/benchmark';
import { LOADED_ID_SUFFIX_SQL, loadKeyTable } from '../lib/keyTable';
import { nodeRunner } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { formatMiB, formatRatio, median, timed } from '../lib/stats';

const TABLE = 'bench_inbox_ops';
const EVENTS = `${TABLE}_events`;
const DEAD_PREFIX = 'evt:dead_';
const SCOPES = ['shop0', 'shop1', 'shop2', 'shop3', 'shop4'];

export const title = '1e. Inbox operations at scale: bulk Requeue and Discard, Summarize Inbox';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const claims = quick ? 50_000 : 10_000_000;
	const dead = quick ? 2_000 : 100_000;
	const oneKeySample = quick ? 50 : 1_000;
	const inFlight = quick ? [1_000, 5_000] : [10_000, 100_000];
	const summaryRuns = quick ? 3 : 7;
	const rounds = quick ? 1 : 3;
	const keyNode = nodeRunner(dist, 'IdempotencyKey', credentials, TABLE);
	const keyOperation = (parameters: IDataObject, items: INodeExecutionData[] = [{ json: {} }]) =>
		keyNode(items, parameters, (name, index) =>
			name === 'key' ? (items[index]?.json.key ?? undefined) : undefined,
		);

	log(`inbox ops: loading ${claims.toLocaleString('en')} completed keys…`);
	const loaded = await timed(() =>
		loadKeyTable(dist, pool, TABLE, {
			count: claims,
			days: 30,
			keyPrefix: 'evt:evt_',
			keySuffixSql: LOADED_ID_SUFFIX_SQL,
		}),
	);
	log(`inbox ops: loaded in ${(loaded.ms / 1000).toFixed(0)} s`);
	await pool.query(`DROP TABLE IF EXISTS ${EVENTS}`);
	// The event table as Keep Event makes it: the node's own claim with Create Table If Missing.
	await nodeRunner(
		dist,
		'IdempotencyClaim',
		credentials,
		TABLE,
	)([{ json: { body: { id: 'evt_table_maker' } } }], {
		keySource: 'auto',
		claimMode: 'lease',
		keepEvent: true,
	});
	await pool.query(`DELETE FROM ${EVENTS}`);

	// Dead letters as Retry Later parks them: a processing claim whose lease never ends, a 1 KiB event.
	const parkAfresh = async () => {
		await pool.query(`DELETE FROM ${TABLE} WHERE starts_with(key, $1)`, [DEAD_PREFIX]);
		await pool.query(`DELETE FROM ${EVENTS}`);
		await pool.query(
			`INSERT INTO ${TABLE} (key, first_seen, lease_until, claim_token)
			 SELECT $2 || lpad(i::text, 8, '0'), now() - interval '2 days', 'infinity', substr(decode(md5(i::text), 'hex'), 1, 12)
			 FROM generate_series(1, $1::int) AS i`,
			[dead, DEAD_PREFIX],
		);
		await pool.query(
			`INSERT INTO ${EVENTS} (key, received_at, dead_at, attempts, content_type, last_error, headers, body)
			 SELECT $2 || lpad(i::text, 8, '0'), now() - interval '2 days', now() - interval '1 day', 8, 'application/json',
			        'HTTP 502 from the shipping API', '{"x-github-event":"push"}', convert_to(repeat('x', 1000), 'UTF8')
			 FROM generate_series(1, $1::int) AS i`,
			[dead, DEAD_PREFIX],
		);
		await pool.query(`VACUUM ANALYZE ${TABLE}, ${EVENTS}`);
	};
	// After a requeue: the same rows parked again.
	const repark = async () => {
		await pool.query(
			`UPDATE ${EVENTS} SET dead_at = now() - interval '1 day', attempts = 8 WHERE dead_at IS NULL`,
		);
		await pool.query(
			`UPDATE ${TABLE} SET lease_until = 'infinity' WHERE starts_with(key, $1) AND lease_until IS NOT NULL`,
			[DEAD_PREFIX],
		);
		await pool.query(`VACUUM ANALYZE ${TABLE}, ${EVENTS}`);
	};
	const deadLetters = async () =>
		(
			await pool.query<{ n: number }>(
				`SELECT count(*)::int AS n FROM ${EVENTS} WHERE dead_at IS NOT NULL`,
			)
		).rows[0].n;
	await parkAfresh();

	const dryRun = await timed(() => keyOperation({ operation: 'requeueEvents', dryRun: true }));
	const matched = dryRun.value[0][0].json.matched as number;
	check(matched === dead, `inbox ops: Dry Run matched ${matched} of ${dead} dead letters`);

	// Each side in every round, in rotated order, each leaving the dead letters as it found them.
	const sample = Array.from(
		{ length: oneKeySample },
		(_, i) => `${DEAD_PREFIX}${String(i + 1).padStart(8, '0')}`,
	);
	const sides: Record<'bulk' | 'oneByOne' | 'listed' | 'discard', () => Promise<Measured>> = {
		/** Requeue Kept Events, every dead letter. */
		bulk: async () => {
			const result = await measured(() =>
				keyOperation({ operation: 'requeueEvents', batchSize: 10_000 }),
			);
			const out = result.value[0][0].json;
			check(
				out.requeued === dead && (await deadLetters()) === 0,
				`inbox ops: Requeue Kept Events requeued ${String(out.requeued)} of ${dead}`,
			);
			await repark();
			return { ...result, batches: out.batches as number };
		},
		/** Before: Requeue Dead Letter, one key per execution (a sample: time per key). */
		oneByOne: async () => {
			const result = await measured(async () => {
				for (const key of sample) await keyOperation({ operation: 'requeue' }, [{ json: { key } }]);
			});
			check(
				(await deadLetters()) === dead - oneKeySample,
				'inbox ops: Requeue Dead Letter did not requeue its sample',
			);
			await repark();
			return { ...result, batches: oneKeySample };
		},
		/** Before, all at once: List Stuck Claims, then one Requeue Dead Letter execution of every item. */
		listed: async () => {
			const result = await measured(async () => {
				const [items] = await keyOperation({
					operation: 'listStuck',
					stuckAfterMinutes: 0,
					maxKeys: 100_000,
				});
				const letters = items.filter((item) => item.json.kind === 'dead_letter');
				return keyOperation({ operation: 'requeue' }, letters);
			});
			check(
				result.value[0].length === dead && (await deadLetters()) === 0,
				'inbox ops: List Stuck Claims + Requeue Dead Letter did not requeue every dead letter',
			);
			await repark();
			return { ...result, batches: 1 };
		},
		/** Discard Kept Events, every dead letter. */
		discard: async () => {
			const result = await measured(() =>
				keyOperation({ operation: 'discardEvents', batchSize: 10_000 }),
			);
			const { rows: left } = await pool.query<{ events: number; processing: number }>(
				`SELECT (SELECT count(*)::int FROM ${EVENTS}) AS events,
				        (SELECT count(*)::int FROM ${TABLE} WHERE starts_with(key, $1) AND lease_until IS NOT NULL) AS processing`,
				[DEAD_PREFIX],
			);
			check(
				result.value[0][0].json.discarded === dead &&
					left[0].events === 0 &&
					left[0].processing === 0,
				`inbox ops: Discard Kept Events left ${left[0].events} events, ${left[0].processing} claims processing`,
			);
			await parkAfresh();
			return { ...result, batches: result.value[0][0].json.batches as number };
		},
	};
	type Side = keyof typeof sides;
	const names = Object.keys(sides) as Side[];
	const perRound: Measured[][] = await rotatedRounds(rounds, names, (side) => sides[side]());
	const of = (side: Side) => perRound.map((round) => round[names.indexOf(side)]);
	const ms = (side: Side) => median(of(side).map((result) => result.ms));
	const rss = (side: Side) => median(of(side).map((result) => result.peakRssGrowth));
	const heap = (side: Side) => median(of(side).map((result) => result.heapGrowth));
	log(
		`inbox ops: ${dead} dead letters, medians of ${rounds}: bulk requeue ${(ms('bulk') / 1000).toFixed(1)} s, ` +
			`list + requeue ${(ms('listed') / 1000).toFixed(1)} s, discard ${(ms('discard') / 1000).toFixed(1)} s, ` +
			`one key ${(ms('oneByOne') / oneKeySample).toFixed(2)} ms`,
	);

	// Nothing kept for the summary but what it counts.
	await pool.query(`DELETE FROM ${EVENTS}`);
	await pool.query(`DELETE FROM ${TABLE} WHERE starts_with(key, $1)`, [DEAD_PREFIX]);

	// Summarize Inbox with events in flight in every state, five scopes and unscoped keys.
	const summaries: Array<{
		events: number;
		node: number;
		plainJoin: number;
		plans: { fenced: PlanFacts; plain: PlanFacts };
	}> = [];
	let added = 0;
	for (const events of inFlight) {
		await addInFlight(pool, added, events - added);
		added = events;
		await pool.query(`VACUUM ANALYZE ${TABLE}, ${EVENTS}`);
		const node: number[] = [];
		const plainJoin: number[] = [];
		for (let round = 0; round < summaryRuns; round++) {
			const { ms, value } = await timed(() => keyOperation({ operation: 'inboxSummary' }));
			node.push(ms);
			const total = value[0].reduce(
				(sum, item) =>
					sum +
					['due', 'running', 'scheduled', 'dead'].reduce(
						(n, state) => n + ((item.json[state] as IDataObject).count as number),
						0,
					),
				0,
			);
			check(total === events, `inbox ops: Summarize Inbox counted ${total} of ${events} events`);
			plainJoin.push((await timed(() => pool.query(PLAIN_JOIN_SQL))).ms);
		}
		const plans = {
			fenced: await planFacts(pool, FENCED_JOIN_SQL),
			plain: await planFacts(pool, PLAIN_JOIN_SQL),
		};
		summaries.push({ events, node: median(node), plainJoin: median(plainJoin), plans });
		log(
			`inbox ops: summary of ${events} events in ${median(node).toFixed(1)} ms (plain join ${median(plainJoin).toFixed(1)} ms; ` +
				`pages: fenced ${plans.fenced.pages} by ${plans.fenced.join}, plain ${plans.plain.pages} by ${plans.plain.join})`,
		);
	}

	const perKeyBulk = ms('bulk') / dead;
	const perKeyOne = ms('oneByOne') / oneKeySample;
	const rows = [
		{
			measure: `Requeue Kept Events, ${dead.toLocaleString('en')} dead letters beside ${claims.toLocaleString('en')} keys, batches of 10,000: time; node process memory (peak RSS growth)`,
			value: `${(ms('bulk') / 1000).toFixed(1)} s; ${formatMiB(rss('bulk'))}`,
			target: 'reported',
		},
		{
			measure:
				'time per dead letter: Requeue Dead Letter one key per execution ÷ Requeue Kept Events',
			value: formatRatio(perKeyOne / perKeyBulk),
			target: 'reported',
		},
		{
			measure:
				'List Stuck Claims + one Requeue Dead Letter of every listed item: time; memory (peak RSS growth)',
			value: `${(ms('listed') / 1000).toFixed(1)} s (${formatRatio(ms('listed') / ms('bulk'))} the bulk's time); ${formatMiB(rss('listed'))}`,
			target: 'reported',
		},
		{
			measure: `Discard Kept Events, ${dead.toLocaleString('en')} dead letters: time; memory (peak RSS growth)`,
			value: `${(ms('discard') / 1000).toFixed(1)} s; ${formatMiB(rss('discard'))}`,
			target: 'reported',
		},
		...summaries.map((summary) => ({
			measure: `Summarize Inbox, ${summary.events.toLocaleString('en')} events in flight beside ${claims.toLocaleString('en')} keys (median of ${summaryRuns}); the same counts as a plain join`,
			value: `${summary.node.toFixed(0)} ms; ${summary.plainJoin.toFixed(0)} ms`,
			target: 'cheap enough for every minute',
			met: summary.node < 60_000,
		})),
	];
	return {
		rows,
		details:
			`${claims.toLocaleString('en')} completed keys bulk-loaded (generate_series, ${(loaded.ms / 1000).toFixed(0)} s) in the ` +
			`node's compact table, then ${dead.toLocaleString('en')} dead letters as Retry Later parks them (a claim whose lease ` +
			'never ends, a 1 KiB event, attempts 8), the tables vacuumed and analysed. Each operation runs through the ' +
			"built node's execute(); memory is the benchmark process's RSS, sampled every 10 ms, at its peak less before. " +
			`Medians of ${rounds} rounds, the four sides in rotated order. Dry Run count: ${dryRun.ms.toFixed(0)} ms. ` +
			`Requeue Kept Events: ${(ms('bulk') / 1000).toFixed(2)} s in ${of('bulk')[0].batches} batches of 10,000 ` +
			`(${(perKeyBulk * 1000).toFixed(0)} µs per event, heap growth ${formatMiB(heap('bulk'))}); ` +
			`Requeue Dead Letter one key per execution: ${perKeyOne.toFixed(2)} ms per key over ${oneKeySample} keys ` +
			`(${((perKeyOne * dead) / 1000).toFixed(0)} s for all at that rate); List Stuck Claims (Max Keys 100,000) then one ` +
			`Requeue Dead Letter execution of ${dead.toLocaleString('en')} items: ${(ms('listed') / 1000).toFixed(2)} s, peak RSS ` +
			`growth ${formatMiB(rss('listed'))} (one statement, no pause, every key in the workflow's memory). Discard Kept ` +
			`Events: ${(ms('discard') / 1000).toFixed(2)} s in ${of('discard')[0].batches} batches. Between batches Requeue and ` +
			'Discard Kept Events pause as long as the batch took (as Purge), so about half of their time is that pause. ' +
			`Each round's times, bulk / list + requeue / discard (s): ${perRound
				.map((round) =>
					[
						round[names.indexOf('bulk')],
						round[names.indexOf('listed')],
						round[names.indexOf('discard')],
					]
						.map((result) => (result.ms / 1000).toFixed(1))
						.join(' / '),
				)
				.join('; ')}. ` +
			`Summarize Inbox: ${summaries.map((s) => `${s.events.toLocaleString('en')} events ${s.node.toFixed(1)} ms`).join(', ')} ` +
			'(a quarter each due, running, scheduled and dead; half the keys in five scopes), JIT off for the statement. ' +
			'Shared-buffer pages touched (hit or read, EXPLAIN BUFFERS) and plan of the same counts joined as the node joins ' +
			'(each claim by its key behind an OFFSET 0 fence) and as a plain join planned by Postgres: ' +
			summaries
				.map(
					(s) =>
						`${s.events.toLocaleString('en')} events: fenced ${s.plans.fenced.pages.toLocaleString('en')} pages (${s.plans.fenced.join}); ` +
						`plain ${s.plans.plain.pages.toLocaleString('en')} pages (${s.plans.plain.join}), ${s.plainJoin.toFixed(1)} ms`,
				)
				.join('; ') +
			'. No index was added.',
	};
};

/** The summary's counting as a plain join: what Postgres plans without the node's OFFSET 0 fence. */
const PLAIN_JOIN_SQL =
	`SELECT split_part(v.key, ':', 1) AS scope, v.dead_at IS NOT NULL AS dead, c.lease_until <= now() AS due, count(*) ` +
	`FROM ${EVENTS} AS v JOIN ${TABLE} AS c ON c.key = v.key WHERE c.lease_until IS NOT NULL GROUP BY 1, 2, 3`;

/** The same counting as the node joins it (keptEventsSql): each claim by its key, behind an OFFSET 0 fence. */
const FENCED_JOIN_SQL =
	`SELECT split_part(v.key, ':', 1) AS scope, v.dead_at IS NOT NULL AS dead, c.lease_until <= now() AS due, count(*) ` +
	`FROM ${EVENTS} AS v CROSS JOIN LATERAL (SELECT c.lease_until FROM ${TABLE} AS c WHERE c.key = v.key ` +
	'AND c.lease_until IS NOT NULL OFFSET 0) AS c GROUP BY 1, 2, 3';

interface PlanFacts {
	/** Shared-buffer pages the statement touched (hit or read). */
	pages: number;
	/** How it joined the two tables. */
	join: string;
}

/** What EXPLAIN (ANALYZE, BUFFERS) says of a read: pages touched and the join it chose. */
async function planFacts(pool: Pool, sql: string): Promise<PlanFacts> {
	const { rows } = await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
	const root = (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan;
	const joins: string[] = [];
	const walk = (node: PlanNode) => {
		if (/Join|Nested Loop/.test(node['Node Type'])) {
			const inner = node.Plans?.map((child) => child['Node Type']).join(' + ') ?? '';
			joins.push(`${node['Node Type']} over ${inner}`);
		}
		for (const child of node.Plans ?? []) walk(child);
	};
	walk(root);
	return {
		pages: root['Shared Hit Blocks'] + root['Shared Read Blocks'],
		join: joins.join(', ') || 'no join',
	};
}

interface PlanNode {
	'Node Type': string;
	'Shared Hit Blocks': number;
	'Shared Read Blocks': number;
	Plans?: PlanNode[];
}

/** Events in flight `from`…`from + count`: a quarter each due, running, scheduled and dead; half in a scope. */
async function addInFlight(pool: Pool, from: number, count: number): Promise<void> {
	const key = `CASE WHEN i % 2 = 0 THEN 'evt:' ELSE (ARRAY[${SCOPES.map((s) => `'${s}'`).join(', ')}])[1 + i % 5] || ':evt:' END || 'kept_' || i`;
	await pool.query(
		`INSERT INTO ${TABLE} (key, first_seen, lease_until, claim_token)
		 SELECT ${key}, now() - interval '1 hour',
		        CASE i % 4 WHEN 0 THEN 'infinity' WHEN 1 THEN now() - interval '5 minutes' ELSE now() + interval '10 minutes' END,
		        substr(decode(md5(i::text), 'hex'), 1, 12)
		 FROM generate_series($1::int + 1, $1::int + $2::int) AS i`,
		[from, count],
	);
	await pool.query(
		`INSERT INTO ${EVENTS} (key, received_at, dead_at, attempts, content_type, last_error, body)
		 SELECT ${key}, now() - interval '1 hour', CASE WHEN i % 4 = 0 THEN now() - interval '30 minutes' END, 1 + i % 8,
		        'application/json', CASE WHEN i % 4 IN (0, 2) THEN 'HTTP 502 from the shipping API' END,
		        convert_to(repeat('x', 1000), 'UTF8')
		 FROM generate_series($1::int + 1, $1::int + $2::int) AS i`,
		[from, count],
	);
}

/** One side's run: its time, memory, and the statements or executions it took. */
interface Measured {
	ms: number;
	peakRssGrowth: number;
	heapGrowth: number;
	batches: number;
}

/** Runs `work`, sampling this process's memory every 10 ms: time, peak RSS growth and heap growth. */
async function measured<T>(
	work: () => Promise<T>,
): Promise<{ ms: number; value: T; peakRssGrowth: number; heapGrowth: number }> {
	const before = process.memoryUsage();
	let peakRss = before.rss;
	const sampler = setInterval(() => {
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
	}, 10);
	try {
		const { ms, value } = await timed(work);
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
		return {
			ms,
			value,
			peakRssGrowth: peakRss - before.rss,
			heapGrowth: process.memoryUsage().heapUsed - before.heapUsed,
		};
	} finally {
		clearInterval(sampler);
	}
}
