// Idempotency Limit at the node against what it sits beside: taking and freeing a slot (two one-item
// executions: Take Slot, then Free Slot) against a claim and its Complete (Claim With Lease, then Complete);
// a rate check (Check Rate, R = 50 per 10 s) against a claim (Claim With Lease, a new key). Built nodes, one
// server, each side a block of one-item executions per round, rounds in rotated order. The limit keys are
// 100 customers in turn.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { claimOfItem, nodeRunner } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, median } from '../lib/stats';
import { webhookItem } from '../../harness/node/executeContext';

const TABLE = 'bench_limit_claims';
const CUSTOMERS = 100;
const SLOT_TARGET = 1.3;
const RATE_TARGET = 1.2;

type Side = 'claim + Complete' | 'Take Slot + Free Slot' | 'claim' | 'Check Rate';
const SIDES: Side[] = ['claim + Complete', 'Take Slot + Free Slot', 'claim', 'Check Rate'];

const sizes = (quick: boolean) => (quick ? { rounds: 6, block: 30 } : { rounds: 20, block: 100 });

export const title =
	'1h. Idempotency Limit: a slot taken and freed, a rate checked, against a claim';
export const run: Benchmark = async ({ dist, credentials, pool, quick, check }) => {
	const claimNode = nodeRunner(dist, 'IdempotencyClaim', credentials, TABLE);
	const keyNode = nodeRunner(dist, 'IdempotencyKey', credentials, TABLE);
	const limitNode = nodeRunner(dist, 'IdempotencyLimit', credentials, TABLE);
	let next = 0;
	let tookAndFreed = 0;
	const customer = () => ({ json: { customer: `cus_${next++ % CUSTOMERS}` } });
	const limitKey = (items: INodeExecutionData[]) => (name: string, index: number) =>
		name === 'limitKey' ? items[index].json.customer : undefined;
	const claim = () =>
		claimNode([webhookItem(`{"id":"l${next++}"}`)], {
			keySource: 'auto',
			claimMode: 'lease',
			leaseSeconds: 300,
		});
	const steps: Record<Side, () => Promise<unknown>> = {
		'claim + Complete': async () => {
			const [won] = await claim();
			return keyNode(won, { operation: 'complete' }, claimOfItem(won));
		},
		'Take Slot + Free Slot': async () => {
			const items = [customer()];
			const [got] = await limitNode(
				items,
				{ operation: 'takeSlot', maxAtOnce: 2, slotLeaseSeconds: 300, whenNoSlot: 'leave' },
				limitKey(items),
			);
			const [freed] = await limitNode(got, { operation: 'freeSlot' }, (name, index) =>
				name === 'slotId'
					? ((got[index].json.idempotency as IDataObject).slot as IDataObject).slotId
					: undefined,
			);
			if (((freed[0]?.json.idempotency as IDataObject)?.slot as IDataObject)?.freed === true)
				tookAndFreed++;
		},
		claim: () => claim(),
		'Check Rate': () => {
			const items = [customer()];
			return limitNode(
				items,
				{ operation: 'checkRate', maxStarts: 50, windowSeconds: 10 },
				limitKey(items),
			);
		},
	};
	const { rounds, block } = sizes(quick);
	// Warm-up: the tables made, the statements prepared.
	for (const side of SIDES) await steps[side]();
	tookAndFreed = 0;
	const perRound = await rotatedRounds(rounds, SIDES, async (side) => {
		const started = process.hrtime.bigint();
		for (let i = 0; i < block; i++) await steps[side]();
		return elapsedMs(started) / block;
	});
	const perSide = SIDES.map((_, index) => median(perRound.map((round) => round[index])));
	check(
		tookAndFreed === rounds * block,
		'Limit bench: every Take Slot got a slot and its Free Slot freed it',
	);
	for (const suffix of ['', '_slots', '_rates'])
		await pool.query(`DROP TABLE IF EXISTS ${TABLE}${suffix}`);
	return {
		rows: [
			ratioRow(
				'1-item executions: Take Slot + Free Slot ÷ Claim With Lease + Complete (median per round)',
				perSide[1] / perSide[0],
				{ max: SLOT_TARGET },
			),
			ratioRow(
				'1-item executions: Check Rate ÷ Claim With Lease, a new key (median per round)',
				perSide[3] / perSide[2],
				{ max: RATE_TARGET },
			),
			reportedRow(
				'time per event, each side',
				SIDES.map((side, index) => `${side} ${formatMs(perSide[index])}`).join('; '),
			),
		],
	};
};
