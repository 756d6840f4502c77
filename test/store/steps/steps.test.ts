/**
 * store/steps on real claim tables of both layouts: who may start and finish a step, what a restart reads,
 * and that every way a claim row goes (Complete, Release, Purge, Clear) takes its step marks with it.
 */
import { Client } from 'pg';

import { clearScope } from '../../../nodes/Idempotency/store/claims/clearScope';
import { purgeKeys } from '../../../nodes/Idempotency/store/claims/purgeKeys';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { finishSteps } from '../../../nodes/Idempotency/store/steps/finishSteps';
import { forgetSteps } from '../../../nodes/Idempotency/store/steps/forgetSteps';
import { startSteps } from '../../../nodes/Idempotency/store/steps/startSteps';
import type { StepRecord } from '../../../nodes/Idempotency/store/steps/stepRecord';
import { createStepTableSql, stepTableRef } from '../../../nodes/Idempotency/store/steps/stepTable';
import { openClaimTable } from '../../../nodes/Idempotency/store/table/claimTable';
import { watermarkRef } from '../../../nodes/Idempotency/store/watermark/watermarkTable';
import {
	completeKeys,
	freshClaimTable,
	originalLayoutClaimTable,
	releaseKeys,
	type TestClaimTable,
} from '../../support/testClaimTables';
import { testPool } from '../../support/database';
import { waitFor } from '../../support/waitFor';

/** Connections of the test's own, apart from the node's pool: a concurrent writer, and a look at who waits. */
const other = testPool(2);
afterAll(() => other.end());

/** A claim table with its step table, its picture read again so it knows of the step table. */
async function stepTable(layout: 'compact' | 'original'): Promise<TestClaimTable> {
	const table = layout === 'compact' ? await freshClaimTable() : await originalLayoutClaimTable();
	await table.pool.query(createStepTableSql(stepTableRef(table.ref)));
	const current = await openClaimTable(table.pool, table.ref, {
		createIfMissing: false,
		privileges: [],
		fresh: true,
	});
	expect(current.capabilities.steps).toBe(true);
	return { ...table, ...current };
}

/** Claims each key with a lease for a claim ID of its own; answers the claim IDs. */
async function leased(table: TestClaimTable, keys: string[]): Promise<string[]> {
	const claimIds: string[] = [];
	for (const key of keys) {
		const claimId = newClaimId();
		await table.claim([key], { mode: 'lease', leaseSeconds: 300, claimId });
		claimIds.push(claimId);
	}
	return claimIds;
}

async function markedKeys(table: TestClaimTable): Promise<string[]> {
	const { rows } = await table.pool.query<{ key: string }>(
		`SELECT key FROM ${stepTableRef(table.ref).qualified} ORDER BY key`,
	);
	return rows.map((row) => row.key);
}

/** How many statements `work` sends: pg's Client#query, called once per statement on a pooled connection. */
async function statementsSent(work: () => Promise<unknown>): Promise<number> {
	const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
	const original = prototype.query;
	let sent = 0;
	prototype.query = function counted(this: unknown, ...args: unknown[]) {
		sent++;
		return original.apply(this, args);
	};
	try {
		await work();
	} finally {
		prototype.query = original;
	}
	return sent;
}

describe.each(['compact', 'original'] as const)('steps on a %s claim table', (layout) => {
	it('a start and a finish are one statement each, whether the step is new, finished or unfinished', async () => {
		const table = await stepTable(layout);
		const [holder] = await leased(table, ['one']);
		const pay = { key: 'one', step: 'pay', claimId: holder };
		const first = [pay, { key: 'one', step: 'mail', claimId: holder }];
		expect(await statementsSent(() => startSteps(table, first, { serviceHonoursKey: false }))).toBe(
			1,
		);
		expect(await statementsSent(() => finishSteps(table, [{ ...pay, result: '1' }]))).toEqual(1);
		const again = [...first, { key: 'one', step: 'ship', claimId: holder }];
		let records: StepRecord[] = [];
		const sent = await statementsSent(
			async () => (records = await startSteps(table, again, { serviceHonoursKey: false })),
		);
		expect(records.map((record) => record.state)).toEqual(['done', 'uncertain', 'run']);
		expect(sent).toBe(1);
	});

	it('a mark that a concurrent start commits while the statement waits on it is read again: uncertain, never a second run', async () => {
		const table = await stepTable(layout);
		const [holder] = await leased(table, ['race']);
		const concurrent = await other.connect();
		try {
			await concurrent.query('BEGIN');
			await concurrent.query(
				`INSERT INTO ${stepTableRef(table.ref).qualified} (key, step, claim_id) VALUES ('race', 'pay', $1)`,
				[holder],
			);
			const { rows } = await concurrent.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
			const starting = startSteps(table, [{ key: 'race', step: 'pay', claimId: holder }], {
				serviceHonoursKey: false,
			});
			// The start's statement has its snapshot and waits for the uncommitted mark.
			await waitFor(
				async () =>
					(
						await other.query(
							'SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
							[rows[0].pid],
						)
					).rows.length > 0,
				15_000,
				'the start waiting for the uncommitted mark',
			);
			await concurrent.query('COMMIT');
			const [record] = await starting;
			expect(record).toMatchObject({ state: 'uncertain', attempts: 1 });
		} finally {
			concurrent.release();
		}
	});

	it("starts for the holder only, per item: a stale claim ID beside the holder's is refused", async () => {
		const table = await stepTable(layout);
		const [holder] = await leased(table, ['a']);
		const records = await startSteps(
			table,
			[
				{ key: 'a', step: 'pay', claimId: holder },
				{ key: 'a', step: 'mail', claimId: newClaimId() },
				{ key: 'never-claimed', step: 'pay', claimId: holder },
			],
			{ serviceHonoursKey: false },
		);
		expect(records.map((record) => record.state)).toEqual(['run', 'not_held', 'not_held']);
		expect(await markedKeys(table)).toEqual(['a']);
	});

	it('a finished step is done on the next start, with its result; an unfinished one is uncertain', async () => {
		const table = await stepTable(layout);
		const [holder] = await leased(table, ['b']);
		const both = [
			{ key: 'b', step: 'pay', claimId: holder },
			{ key: 'b', step: 'mail', claimId: holder },
		];
		await startSteps(table, both, { serviceHonoursKey: false });
		expect(await finishSteps(table, [{ ...both[0], result: '{"id":"ch_1"}' }])).toEqual([
			'finished',
		]);
		// A Finish retried after a lost answer keeps the first result.
		expect(await finishSteps(table, [{ ...both[0], result: '{"id":"other"}' }])).toEqual([
			'finished',
		]);
		const again = await startSteps(table, both, { serviceHonoursKey: true });
		expect(again.map(({ state, attempts, result }) => ({ state, attempts, result }))).toEqual([
			{ state: 'done', attempts: 1, result: { id: 'ch_1' } },
			// Started by this same claim: in flight or unknown, even where the service honours the key.
			{ state: 'uncertain', attempts: 1, result: null },
		]);
	});

	it('Finish refuses a claim ID that does not hold the claim, and a step it did not start', async () => {
		const table = await stepTable(layout);
		const [holder] = await leased(table, ['c']);
		const stranger = newClaimId();
		expect(
			await finishSteps(table, [
				{ key: 'c', step: 'pay', claimId: stranger, result: '1' },
				{ key: 'c', step: 'pay', claimId: holder, result: '1' },
			]),
		).toEqual(['not_held', 'not_started']);
	});

	it("Complete and Release take the settled claims' marks; others stay", async () => {
		const table = await stepTable(layout);
		const [done, failed, other] = await leased(table, ['d', 'e', 'f']);
		await startSteps(
			table,
			[
				{ key: 'd', step: 'pay', claimId: done },
				{ key: 'e', step: 'pay', claimId: failed },
				{ key: 'f', step: 'pay', claimId: other },
			],
			{ serviceHonoursKey: false },
		);
		// A stale claim ID settles nothing, so the marks stay.
		expect(await completeKeys(table, [{ key: 'd', claimId: newClaimId() }])).toEqual([false]);
		expect(await markedKeys(table)).toEqual(['d', 'e', 'f']);
		expect(await completeKeys(table, [{ key: 'd', claimId: done }])).toEqual([true]);
		expect(await releaseKeys(table, [{ key: 'e', claimId: failed }])).toEqual([true]);
		expect(await markedKeys(table)).toEqual(['f']);
	});
});

describe('steps and the deletes that are not a settle', () => {
	it('Purge deletes the marks of the keys it deletes, and only those', async () => {
		const table = await stepTable('compact');
		await table.claim(['old', 'fresh']);
		await table.pool.query(
			`UPDATE ${table.ref.qualified} SET first_seen = now() - interval '40 days' WHERE key = 'old'`,
		);
		await table.pool.query(
			`INSERT INTO ${stepTableRef(table.ref).qualified} (key, step, claim_id) VALUES ('old', 'pay', 'x'), ('fresh', 'pay', 'y')`,
		);
		expect((await purgeKeys(table, { olderThanDays: 30, batchSize: 10 })).deleted).toBe(1);
		expect(await markedKeys(table)).toEqual(['fresh']);
	});

	it('Clear Deduplication History deletes the marks of the scope it clears', async () => {
		const table = await stepTable('compact');
		await table.claim(['feed:1', 'other:1']);
		await table.pool.query(
			`INSERT INTO ${stepTableRef(table.ref).qualified} (key, step, claim_id) VALUES ('feed:1', 'pay', 'x'), ('other:1', 'pay', 'y')`,
		);
		const result = await clearScope(table.pool, table.ref, watermarkRef(table.ref), {
			scope: 'feed',
			keyPrefix: 'feed:',
			batchSize: 10,
		});
		expect(result.deletedKeys).toBe(1);
		expect(await markedKeys(table)).toEqual(['other:1']);
	});

	it('Forget finds nothing to forget or record where no step table was ever made', async () => {
		const table = await freshClaimTable();
		expect(
			await forgetSteps(table.pool, table.ref, [
				{ key: 'a', step: 'pay' },
				{ key: 'a', step: 'pay', result: '{}' },
			]),
		).toEqual({ states: ['not_found', 'not_found'] });
	});

	it('a table of that name that is not a step table is never touched', async () => {
		const table = await freshClaimTable();
		const lookalike = stepTableRef(table.ref).qualified;
		await table.pool.query(`CREATE TABLE ${lookalike} (key text PRIMARY KEY, note text)`);
		await table.pool.query(`INSERT INTO ${lookalike} VALUES ('a', 'keep me')`);
		const current = await openClaimTable(table.pool, table.ref, {
			createIfMissing: false,
			privileges: [],
			fresh: true,
		});
		expect(current.capabilities.steps).toBe(false);
		const [claimId] = await leased(table, ['a']);
		expect(await completeKeys({ ...table, ...current }, [{ key: 'a', claimId }])).toEqual([true]);
		expect((await table.pool.query(`SELECT note FROM ${lookalike}`)).rows).toEqual([
			{ note: 'keep me' },
		]);
	});
});
