// Idempotency Step's first pass against the bare call: per event, one-item executions of the built nodes,
// a claim (lease), then an HTTP call to a no-op service on loopback and Complete, with or without Start Step
// before the call and Finish Step after it, in alternating rounds. The claim is timed apart from the rest,
// so both the whole event at the node and the part after the claim are compared. A third side starts the
// step and records no result (no Finish Step): the floor of the guard, Start Step's one durable commit.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { claimOfItem, eventBody, freshIds, nodeRunner } from '../lib/nodeClaims';
import { countRoundTrips } from '../lib/queryProbe';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, median } from '../lib/stats';
import { webhookItem } from '../../harness/node/executeContext';

const TABLE = 'bench_step_claims';
const TARGET = 1.2;
const STEP = 'call service';

type Side = 'bare call' | 'guarded call' | 'Start Step only';
const SIDES: Side[] = ['bare call', 'guarded call', 'Start Step only'];

const sizes = (quick: boolean) => (quick ? { rounds: 6, block: 30 } : { rounds: 20, block: 100 });

interface EventTimes {
	claimMs: number;
	afterClaimMs: number;
}

export const title = '1g. Idempotency Step: a guarded call against the bare call, per event';
export const run: Benchmark = async ({ dist, pool, credentials, quick, check }) => {
	let calls = 0;
	const server = createServer((request, response) => {
		request.resume();
		request.on('end', () => {
			calls++;
			response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
	const claimNode = nodeRunner(dist, 'IdempotencyClaim', credentials, TABLE);
	const keyNode = nodeRunner(dist, 'IdempotencyKey', credentials, TABLE);
	const stepNode = nodeRunner(dist, 'IdempotencyStep', credentials, TABLE);
	const stepKeyOf = (item: INodeExecutionData) =>
		((item.json.idempotency as IDataObject).step as IDataObject | undefined)?.key as string;
	/** The service call as n8n's HTTP Request makes it, its answer replacing the item. */
	const call = async (item: INodeExecutionData, idempotencyKey?: string) => {
		const answer = await fetch(serviceUrl, {
			method: 'POST',
			headers: {
				'content-type': 'application/json',
				...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
			},
			body: JSON.stringify({ event: (item.json.idempotency as IDataObject).key }),
		});
		return { json: (await answer.json()) as IDataObject, pairedItem: { item: 0 } };
	};
	const start = async (claimed: INodeExecutionData) => {
		const [run] = await stepNode(
			[claimed],
			{ operation: 'start', stepName: STEP },
			claimOfItem([claimed]),
		);
		check(run.length === 1, 'step guard bench: a first start leaves on Run');
		return run[0];
	};
	const afterClaim: Record<Side, (claimed: INodeExecutionData) => Promise<void>> = {
		'bare call': async (claimed) => {
			await call(claimed);
			await keyNode([claimed], { operation: 'complete' }, claimOfItem([claimed]));
		},
		'guarded call': async (claimed) => {
			const run = await start(claimed);
			const answer = await call(run, stepKeyOf(run));
			const [finished] = await stepNode(
				[answer],
				{ operation: 'finish', stepName: STEP, resultSource: 'item' },
				claimOfItem([claimed]),
			);
			check(finished.length === 1, 'step guard bench: Finish Step records the result');
			await keyNode([claimed], { operation: 'complete' }, claimOfItem([claimed]));
		},
		'Start Step only': async (claimed) => {
			const run = await start(claimed);
			await call(run, stepKeyOf(run));
			await keyNode([claimed], { operation: 'complete' }, claimOfItem([claimed]));
		},
	};
	const event = async (side: Side, id: string): Promise<EventTimes> => {
		const started = process.hrtime.bigint();
		const [won] = await claimNode([webhookItem(eventBody(id))], {
			keySource: 'auto',
			claimMode: 'lease',
			leaseSeconds: 300,
		});
		const claimMs = elapsedMs(started);
		const afterStarted = process.hrtime.bigint();
		await afterClaim[side](won[0]);
		return { claimMs, afterClaimMs: elapsedMs(afterStarted) };
	};

	// The first Start Step makes the step table: untimed.
	await event('guarded call', freshIds(1)[0]);
	const { rounds, block } = sizes(quick);
	const perRound = await rotatedRounds(rounds, SIDES, async (side) => {
		const times: EventTimes[] = [];
		for (const id of freshIds(block)) times.push(await event(side, id));
		const per = (pick: (t: EventTimes) => number) =>
			times.reduce((sum, t) => sum + pick(t), 0) / block;
		return {
			whole: per((t) => t.claimMs + t.afterClaimMs),
			afterClaim: per((t) => t.afterClaimMs),
		};
	});
	// Statements each side sends per event (one event each, untimed).
	const statements: number[] = [];
	for (const side of SIDES)
		statements.push((await countRoundTrips(dist.pg, () => event(side, freshIds(1)[0]))).roundTrips);
	server.close();
	const medianOf = (index: number, pick: 'whole' | 'afterClaim') =>
		median(perRound.map((round) => round[index][pick]));
	const whole = SIDES.map((_, index) => medianOf(index, 'whole'));
	const after = SIDES.map((_, index) => medianOf(index, 'afterClaim'));
	const { rows } = await pool.query(
		`SELECT (SELECT count(*)::int FROM ${TABLE} WHERE lease_until IS NULL) AS completed, ` +
			`(SELECT count(*)::int FROM ${TABLE}_steps) AS marks`,
	);
	const events = 1 + (rounds * block + 1) * SIDES.length;
	check(
		calls === events && rows[0].completed === events && rows[0].marks === 0,
		'step guard bench: every event called once and completed, its step marks deleted with the claim',
	);
	await pool.query(`DROP TABLE IF EXISTS ${TABLE}_steps, ${TABLE}_events, ${TABLE}`);
	return {
		rows: [
			ratioRow(
				'1-item event at the node (claim, call, Complete): with Start Step + Finish Step ÷ without (median per round)',
				whole[1] / whole[0],
				{ max: TARGET },
			),
			ratioRow(
				'after the claim only (call and Complete): with Start Step + Finish Step ÷ without',
				after[1] / after[0],
			),
			ratioRow(
				'the floor: with Start Step alone (no Finish Step, its one durable commit) ÷ without',
				whole[2] / whole[0],
			),
			reportedRow(
				'time per event, each side (after the claim in brackets)',
				SIDES.map(
					(side, index) => `${side} ${formatMs(whole[index])} (${formatMs(after[index])})`,
				).join('; ') + `; the guard adds ${formatMs(whole[1] - whole[0])}`,
			),
			reportedRow(
				'statements sent per event, each side (claim, call, Complete; with the guard; with Start Step alone)',
				SIDES.map((side, index) => `${side} ${statements[index]}`).join('; '),
			),
		],
	};
};
