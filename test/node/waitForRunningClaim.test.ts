/**
 * Wait for Running Claim: a repeat of a key another execution is processing waits for it, through the
 * claim node's own execute() against real Postgres. Every waiter here shares a pool smaller than their
 * number with the holder's Complete: a waiter that kept a connection would starve that Complete until the
 * waits ran out, and the waiters would end in_progress instead of carrying the holder's answer.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, uniqueTableName } from '../support/database';
import { databaseClock } from '../support/databaseClock';

const clock = databaseClock();

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

/** A pool of 3 connections for everything in this file. */
const credentials = testCredentials({ maxConnections: 3 });

const NEW = 0;
const DUPLICATE = 1;
const MISMATCH = 2;

function claim(
	items: INodeExecutionData[],
	table: string,
	{ waitSeconds = 10, leaseSeconds = 300, payloadFingerprint = 'off' } = {},
) {
	return claimNode.execute.call(
		executeContext(items, {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds,
				waitSeconds,
				options: { table, payloadFingerprint },
			},
			credentials,
		}),
	);
}

function settle(operation: 'complete' | 'release', claimed: INodeExecutionData, table: string) {
	const result = claimed.json.idempotency as IDataObject;
	return keyNode.execute.call(
		executeContext([claimed], {
			parameters: {
				operation,
				key: result.key,
				claimId: result.claimId,
				storeResponse: operation === 'complete',
				responseBodyType: 'text',
				responseText: `answered by ${String(result.claimId)}`,
				options: { table },
			},
			credentials,
			nodeType: 'idempotencyKey',
		}),
	);
}

const resultOf = (item: INodeExecutionData) => item.json.idempotency as IDataObject;
const delivery = (id: string) => webhookItem(`{"id":"${id}"}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `count` executions at once. */
function start(count: number, run: () => Promise<INodeExecutionData[][]>) {
	return Array.from({ length: count }, run);
}

/** Resolves once all have returned. */
function concurrently(count: number, run: () => Promise<INodeExecutionData[][]>) {
	return Promise.all(start(count, run));
}

/** The New item of the first execution that took the claim (the others are still waiting for it). */
function firstNew(executions: Array<Promise<INodeExecutionData[][]>>): Promise<INodeExecutionData> {
	return Promise.race(
		executions.map((execution) =>
			execution.then((output) =>
				output[NEW].length > 0 ? output[NEW][0] : new Promise<never>(() => undefined),
			),
		),
	);
}

function duplicateKinds(outputs: INodeExecutionData[][][]): unknown[] {
	return outputs.flatMap((output) => output[DUPLICATE]).map((item) => resultOf(item).duplicateKind);
}

describe('Wait for Running Claim', () => {
	it('20 executions of one key: one runs, 19 wait and leave Duplicate with the answer its Complete stored', async () => {
		const table = uniqueTableName('wait');
		const [[holder]] = await claim([delivery('evt_W20')], table);
		const waiters = concurrently(19, () => claim([delivery('evt_W20')], table));
		await sleep(300);
		const [[completed]] = await settle('complete', holder, table);
		const outputs = await waiters;

		expect(outputs.map((output) => output[NEW].length)).toEqual(Array(19).fill(0));
		const answers = outputs.map((output) => resultOf(output[DUPLICATE][0]));
		for (const answer of answers) {
			expect(answer).toMatchObject({ duplicateKind: 'completed', status: 'completed' });
			expect(answer.response).toEqual(resultOf(completed).response);
		}
		expect(resultOf(completed).response).toMatchObject({
			body: `answered by ${String(resultOf(holder).claimId)}`,
		});
	});

	it('a released claim is taken by exactly one waiter, which the others then wait for', async () => {
		const table = uniqueTableName('wait');
		const [[holder]] = await claim([delivery('evt_WR')], table);
		const waiters = start(5, () => claim([delivery('evt_WR')], table));
		await sleep(200);
		await settle('release', holder, table);
		await settle('complete', await firstNew(waiters), table);
		const outputs = await Promise.all(waiters);
		const winners = outputs.flatMap((output) => output[NEW]);
		expect(winners.map(resultOf)).toEqual([
			expect.objectContaining({ isNew: true, reclaimed: false }),
		]);
		expect(duplicateKinds(outputs)).toEqual(Array(4).fill('completed'));
	});

	it('a holder that died: after its lease one waiter takes the claim over and runs, the others get its answer', async () => {
		const table = uniqueTableName('wait');
		// The holder claims with a 1 s lease and never completes: its execution died. The waiters' clock
		// passes its lease while they wait.
		await claim([delivery('evt_WD')], table, { leaseSeconds: 1 });
		const waiters = start(5, () => claim([delivery('evt_WD')], table));
		await clock.advance(2);
		const winner = await firstNew(waiters);
		const [[completed]] = await settle('complete', winner, table);
		const outputs = await Promise.all(waiters);
		expect(outputs.flatMap((output) => output[NEW]).map(resultOf)).toEqual([
			expect.objectContaining({ isNew: true, reclaimed: true }),
		]);
		expect(duplicateKinds(outputs)).toEqual(Array(4).fill('completed'));
		for (const item of outputs.flatMap((output) => output[DUPLICATE]))
			expect(resultOf(item).response).toEqual(resultOf(completed).response);
	});

	it('when the wait runs out first, the repeat leaves Duplicate in progress, as without waiting', async () => {
		const table = uniqueTableName('wait');
		await claim([delivery('evt_WT')], table);
		const started = Date.now();
		const [fresh, [duplicate]] = await claim([delivery('evt_WT')], table, { waitSeconds: 1 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
		expect(fresh).toEqual([]);
		expect(resultOf(duplicate)).toMatchObject({
			duplicateKind: 'in_progress',
			status: 'processing',
		});
		expect(resultOf(duplicate).response).toBeUndefined();
	});

	it('an item repeated within the batch does not wait for its own execution', async () => {
		const table = uniqueTableName('wait');
		const started = Date.now();
		const [fresh, duplicate] = await claim([delivery('evt_WB'), delivery('evt_WB')], table, {
			waitSeconds: 30,
		});
		expect(Date.now() - started).toBeLessThan(20_000);
		expect(fresh).toHaveLength(1);
		expect(resultOf(duplicate[0])).toMatchObject({ duplicateKind: 'in_progress' });
	});

	it('a repeat with another payload goes to Mismatch at once, without waiting', async () => {
		const table = uniqueTableName('wait');
		const fingerprinted = { payloadFingerprint: 'canonicalJson', waitSeconds: 30 };
		await claim([webhookItem('{"id":"evt_WM","amount":1}')], table, fingerprinted);
		const started = Date.now();
		const outputs = await claim([webhookItem('{"id":"evt_WM","amount":2}')], table, fingerprinted);
		expect(Date.now() - started).toBeLessThan(20_000);
		expect(outputs[MISMATCH].map((item) => resultOf(item).mismatch)).toEqual([true]);
	});
});
