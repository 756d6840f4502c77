// Against Remove Duplicates: n8n's built-in Remove Duplicates ("Remove Items Processed in Previous Executions")
// vs the Idempotency Claim node, both in front of the same business step (an insert into business_log).
// Every event is delivered 8 times at the same moment, as a provider's retries can be. Counted: business
// rows per event (anything above one is a duplicate that got through) and throughput.
import { inN8n, ratioRow, reportedRow } from '../lib/benchmark';
import { combinedLoad, runGroups, type LoadResult } from '../lib/loadGenerator';
import { eventBody, freshIds } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { formatMs, formatRate, summarize } from '../lib/stats';

type Side = 'removeDuplicates' | 'nodeVsRemoveDuplicates';
interface SideResult extends LoadResult {
	failures: string[];
	rows: number;
	keys: number;
	through: number;
}
const COPIES = 8;
const SIDES: Array<{ key: Side; label: string; eventType: string }> = [
	{
		key: 'removeDuplicates',
		label: 'Remove Duplicates → business step',
		eventType: 'bench-remove-duplicates',
	},
	{
		key: 'nodeVsRemoveDuplicates',
		label: 'Idempotency Claim → business step',
		eventType: 'bench-node',
	},
];

export const title = '4. Against Remove Duplicates';
export const run = inN8n(async ({ n8n, pool, quick, log, check }) => {
	const events = quick ? 16 : 200;
	const results = {} as Record<Side, SideResult>;
	// Alternate the two workflows in chunks so both see the same machine conditions.
	const chunks = quick ? 2 : 10;
	const ids = Object.fromEntries(
		SIDES.map((side) => [side.key, freshIds(events, `evt_${side.key}_`)]),
	);
	const perChunk = await rotatedRounds(chunks, SIDES, (side, chunk) => {
		const slice = ids[side.key].slice((chunk * events) / chunks, ((chunk + 1) * events) / chunks);
		return runGroups(
			slice.map((id) =>
				Array.from({ length: COPIES }, () => ({ url: n8n.url(side.key), body: eventBody(id) })),
			),
		);
	});

	for (const [index, side] of SIDES.entries()) {
		const { rows } = await pool.query(
			'SELECT count(*)::int AS rows, count(DISTINCT event_key)::int AS keys FROM business_log WHERE event_type = $1 AND event_key = ANY($2::text[])',
			[side.eventType, ids[side.key].map((id) => `evt:${id}`)],
		);
		const load = combinedLoad(perChunk.map((chunk) => chunk[index]));
		results[side.key] = {
			...load,
			failures: load.answers
				.filter((a) => a.status !== 200)
				.map((a) => `${a.status} ${JSON.stringify(a.body).slice(0, 160)}`),
			rows: rows[0].rows,
			keys: rows[0].keys,
			through: rows[0].rows - rows[0].keys,
		};
		log(
			`${side.key}: ${rows[0].rows} business rows for ${events} events (${rows[0].keys} distinct), statuses ${JSON.stringify(load.statuses)}`,
		);
	}
	const ours = results.nodeVsRemoveDuplicates;
	check(
		ours.through === 0,
		`Idempotency Claim let ${ours.through} duplicate deliveries through to the business step`,
	);
	check(
		ours.keys === events,
		`Idempotency Claim: ${events - ours.keys} events never reached the business step`,
	);
	check(
		ours.statuses[200] === events * COPIES,
		`Idempotency Claim workflow: answers ${JSON.stringify(ours.statuses)}`,
	);

	const theirs = results.removeDuplicates;
	return {
		rows: [
			{
				measure: `duplicates through, Idempotency Claim (${events} events × ${COPIES} concurrent deliveries)`,
				value: String(ours.through),
				target: '0 (asserted)',
				met: ours.through === 0,
			},
			reportedRow(
				'duplicates through, Remove Duplicates (same load)',
				`${theirs.through} (${theirs.keys}/${events} events ran)`,
			),
			ratioRow(
				'deliveries/s: Idempotency Claim ÷ Remove Duplicates workflow',
				ours.perSecond / theirs.perSecond,
			),
		],
		details: [
			`${events} distinct events per workflow, each delivered ${COPIES} times at once (8 simultaneous requests per event, event after event),`,
			'the two workflows alternating in chunks. Business step = n8n Postgres node inserting one business_log row; "through" = rows − distinct events.',
			'Remove Duplicates: operation "Remove Items Processed in Previous Executions", "Value Is New", dedupe value `{{ $json.body.id }}`, scope node.',
			'',
			'| workflow | business rows | duplicates through | events that ran | deliveries/s | p50 ms | p95 ms | HTTP statuses |',
			'|---|---:|---:|---:|---:|---:|---:|---|',
			...SIDES.map((side) => {
				const r = results[side.key];
				const s = summarize(r.latencies);
				return `| ${side.label} | ${r.rows} | ${r.through} | ${r.keys} / ${events} | ${formatRate(r.perSecond)} | ${formatMs(s.p50)} | ${formatMs(s.p95)} | ${JSON.stringify(r.statuses)} |`;
			}),
			...SIDES.filter((side) => results[side.key].failures.length > 0).map(
				(side) =>
					`\n${side.label}: ${results[side.key].failures.length} non-200 answers, first: \`${results[side.key].failures[0].replace(/`/g, "'")}\``,
			),
		].join('\n'),
	};
});
