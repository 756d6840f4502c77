// Keeping events, at the node: a one-item lease claim that keeps a 2 KiB event beside the same claim that
// keeps none (each on its own table, rounds alternated), Complete that drops the event beside Complete on a
// table without events, and Take Due Events' rate over a backlog of due events.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { webhookItem } from '../../harness/node/executeContext';
import { ratioRow, type Benchmark } from '../lib/benchmark';
import { claimOfItem, freshIds, nodeRunner } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { formatRate, formatRatio, median } from '../lib/stats';

const TABLES = { plain: 'bench_inbox_plain', kept: 'bench_inbox_kept' } as const;
type Side = keyof typeof TABLES;
const SIDES: Side[] = ['plain', 'kept'];
const TARGETS = { claim: 1.3, complete: 1.2, takenPerSecond: 1000 };

/** A webhook body of about 2 KiB, as a provider's event is. */
const eventOf = (id: string) =>
	JSON.stringify({ id, type: 'charge.succeeded', data: { note: 'x'.repeat(2000) } });

export const title = '1d. Keeping events (the inbox), at the node';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const perRound = quick ? 20 : 200;
	const rounds = quick ? 2 : 10;
	const backlog = quick ? 500 : 5000;
	const claimNodes = {
		plain: nodeRunner(dist, 'IdempotencyClaim', credentials, TABLES.plain),
		kept: nodeRunner(dist, 'IdempotencyClaim', credentials, TABLES.kept),
	};
	const keyNodes = {
		plain: nodeRunner(dist, 'IdempotencyKey', credentials, TABLES.plain),
		kept: nodeRunner(dist, 'IdempotencyKey', credentials, TABLES.kept),
	};
	const claim = (side: Side, id: string) =>
		claimNodes[side]([webhookItem(eventOf(id), { 'x-github-event': 'push' })], {
			keySource: 'auto',
			claimMode: 'lease',
			leaseSeconds: 300,
			keepEvent: side === 'kept',
			keptHeaders: 'x-github-event',
			maxEventKib: 256,
		});
	const keyOperation = (side: Side, items: INodeExecutionData[], parameters: IDataObject) =>
		keyNodes[side](items, parameters, claimOfItem(items));

	for (const table of Object.values(TABLES)) {
		await pool.query(`DROP TABLE IF EXISTS ${table}_events`);
		await pool.query(`DROP TABLE IF EXISTS ${table}`);
	}
	for (const side of SIDES) await claim(side, freshIds(1)[0]); // tables made outside the timing

	const claimMs: Record<Side, number[]> = { plain: [], kept: [] };
	const completeMs: Record<Side, number[]> = { plain: [], kept: [] };
	await rotatedRounds(rounds, SIDES, async (side) => {
		const claimed: INodeExecutionData[] = [];
		let started = performance.now();
		for (const id of freshIds(perRound)) claimed.push((await claim(side, id))[0][0]);
		claimMs[side].push((performance.now() - started) / perRound);
		started = performance.now();
		for (const item of claimed) await keyOperation(side, [item], { operation: 'complete' });
		completeMs[side].push((performance.now() - started) / perRound);
	});
	const { rows: left } = await pool.query(`SELECT count(*)::int AS n FROM ${TABLES.kept}_events`);
	check(left[0].n <= 1, `inbox: Complete left ${left[0].n} kept events behind`);

	// A backlog of due events, then Take Due Events runs of 1,000 until it is empty.
	for (const ids of chunks(freshIds(backlog), 100))
		await Promise.all(ids.map((id) => claim('kept', id)));
	await pool.query(
		`UPDATE ${TABLES.kept} SET lease_until = now() - interval '1 second' WHERE lease_until IS NOT NULL`,
	);
	let taken = 0;
	const started = performance.now();
	for (;;) {
		const [out] = await keyOperation('kept', [{ json: {} }], {
			operation: 'takeDue',
			maxEvents: 1000,
			leaseSeconds: 300,
			maxAttempts: 8,
		});
		if (out.length === 0) break;
		taken += out.length;
	}
	const takenPerSecond = taken / ((performance.now() - started) / 1000);
	check(taken >= backlog, `inbox: Take Due Events took ${taken} of ${backlog} due events`);

	const claimRatio = median(claimMs.kept) / median(claimMs.plain);
	const completeRatio = median(completeMs.kept) / median(completeMs.plain);
	log(
		`inbox: claim keeping 2 KiB ${formatRatio(claimRatio)}, Complete dropping it ${formatRatio(completeRatio)}, Take Due ${formatRate(takenPerSecond)}`,
	);
	return {
		rows: [
			ratioRow(
				'1-item lease claim keeping a 2 KiB event ÷ the same claim keeping none (time per claim)',
				claimRatio,
				{ max: TARGETS.claim },
			),
			ratioRow(
				'Complete that drops the kept event ÷ Complete on a table without events',
				completeRatio,
				{ max: TARGETS.complete },
			),
			{
				measure: 'Take Due Events: due events taken over and output per second (runs of 1,000)',
				value: formatRate(takenPerSecond),
				target: `≥ ${TARGETS.takenPerSecond}/s`,
				met: takenPerSecond >= TARGETS.takenPerSecond,
			},
		],
		details:
			`${rounds} alternated rounds of ${perRound} one-item executions per side (Claim With Lease, a 2 KiB JSON ` +
			`body with Raw Body, one kept header), each claim's Complete timed after its round; then ${backlog} kept ` +
			`events made due and taken by Take Due Events runs of 1,000 (${taken} taken). Medians of the rounds' ` +
			`per-claim times: claim ${median(claimMs.plain).toFixed(3)} ms without, ${median(claimMs.kept).toFixed(3)} ms ` +
			`with; Complete ${median(completeMs.plain).toFixed(3)} ms without, ${median(completeMs.kept).toFixed(3)} ms with.`,
	};
};

function chunks<T>(values: T[], size: number): T[][] {
	const out: T[][] = [];
	for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
	return out;
}
