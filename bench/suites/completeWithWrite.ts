// Complete With Write against what it replaces: the business insert as its own statement (n8n's Postgres
// node) and then Idempotency Key's Complete, one-item executions of the built nodes on one server, in
// alternating rounds. Each side gets claims made beforehand (untimed), so only the write and the Complete
// are measured.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { claimOfItem, nodeRunner } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, median } from '../lib/stats';
import { webhookItem } from '../../harness/node/executeContext';

const TABLE = 'bench_write_claims';
const ORDERS = 'bench_write_orders';
const TARGET = 1.15;

type Side = 'insert, then Complete' | 'Complete With Write';
const SIDES: Side[] = ['insert, then Complete', 'Complete With Write'];

const sizes = (quick: boolean) => (quick ? { rounds: 6, block: 30 } : { rounds: 20, block: 100 });

export const title =
	'1f. Complete With Write: the business write and the Complete in one transaction';
export const run: Benchmark = async ({ dist, pool, credentials, quick, check }) => {
	await pool.query(`DROP TABLE IF EXISTS ${ORDERS}`);
	await pool.query(`CREATE TABLE ${ORDERS} (event_key text PRIMARY KEY, amount integer NOT NULL)`);
	const claimNode = nodeRunner(dist, 'IdempotencyClaim', credentials, TABLE);
	const keyNode = nodeRunner(dist, 'IdempotencyKey', credentials, TABLE);
	const insert = `INSERT INTO ${ORDERS} (event_key, amount) VALUES ($1, $2)`;
	let next = 0;
	/** A block of claimed items, one per future execution (claimed in one untimed execution). */
	const claimed = async (count: number): Promise<INodeExecutionData[]> => {
		const items = Array.from({ length: count }, () => webhookItem(`{"id":"w${next++}"}`));
		const [won] = await claimNode(items, {
			keySource: 'auto',
			claimMode: 'lease',
			leaseSeconds: 300,
		});
		return won;
	};
	const key = (item: INodeExecutionData) => (item.json.idempotency as IDataObject).key as string;
	const steps: Record<Side, (item: INodeExecutionData) => Promise<unknown>> = {
		'insert, then Complete': async (item) => {
			await pool.query(insert, [key(item), 1]);
			return keyNode([item], { operation: 'complete' }, claimOfItem([item]));
		},
		'Complete With Write': (item) =>
			keyNode([item], { operation: 'completeWithWrite', query: insert }, (name, index) =>
				name === 'queryParameters' ? [key(item), 1] : claimOfItem([item])(name, index),
			),
	};
	const { rounds, block } = sizes(quick);
	const perRound = await rotatedRounds(rounds, SIDES, async (side) => {
		const items = await claimed(block);
		const started = process.hrtime.bigint();
		for (const item of items) await steps[side](item);
		return elapsedMs(started) / block;
	});
	const perSide = SIDES.map((_, index) => median(perRound.map((round) => round[index])));
	const { rows } = await pool.query(
		`SELECT (SELECT count(*)::int FROM ${ORDERS}) AS orders, ` +
			`(SELECT count(*)::int FROM ${TABLE} WHERE lease_until IS NULL) AS completed`,
	);
	check(
		rows[0].orders === rounds * block * SIDES.length && rows[0].completed === rows[0].orders,
		'Complete With Write bench: every item written once and completed',
	);
	await pool.query(`DROP TABLE ${ORDERS}`);
	return {
		rows: [
			ratioRow(
				'1-item write and Complete: Complete With Write (one transaction) ÷ an insert, then Complete (median per round)',
				perSide[1] / perSide[0],
				{ max: TARGET },
			),
			reportedRow(
				'time per event, each side',
				SIDES.map((side, index) => `${side} ${formatMs(perSide[index])}`).join('; '),
			),
		],
	};
};
