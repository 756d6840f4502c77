/**
 * The watermark of Value Is Higher / Value Is a Date Later, on real Postgres: what passes, what the row
 * holds, and that overlapping executions never both pass one value, including the scope's very first
 * executions (no row yet: two inserts race) and an execution that waits for another's lock.
 */
import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import {
	advanceWatermark,
	type WatermarkKind,
	type WatermarkOutcome,
} from '../../../nodes/Idempotency/store/watermark/advanceWatermark';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import {
	watermarkRef,
	type WatermarkRef,
} from '../../../nodes/Idempotency/store/watermark/watermarkTable';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { markValue } from '../../../nodes/Idempotency/watermark/markValue';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';
import { waitFor } from '../../support/waitFor';

const admin = testPool(2);
afterAll(() => admin.end());

const EXECUTIONS = 8;

let pool: Pool;
let ref: WatermarkRef;
beforeAll(async () => {
	pool = await poolFor(testCredentials());
	ref = watermarkRef(tableRef('public', uniqueTableName('wm')));
});

const newScope = () => `scope_${randomBytes(4).toString('hex')}`;

function advance(
	scope: string,
	values: unknown[],
	kind: WatermarkKind = 'number',
	claimId = newClaimId(),
): Promise<WatermarkOutcome> {
	return advanceWatermark(pool, ref, {
		scope,
		kind,
		values: values.map((value) => markValue(value, kind)),
		claimId,
		createIfMissing: true,
	});
}

const passedValues = (values: unknown[], outcome: WatermarkOutcome) =>
	values.filter((_, index) => outcome.passed[index]);

async function rowOf(scope: string) {
	const { rows } = await admin.query(
		`SELECT kind, mark, previous_mark, xmin::text AS version FROM ${ref.qualified} WHERE scope = $1`,
		[scope],
	);
	return rows[0];
}

describe('what passes', () => {
	it('the first execution of a scope passes every value and sets the mark to the highest', async () => {
		const scope = newScope();
		const outcome = await advance(scope, [5, 3, 9, 9, 1]);
		expect(outcome).toEqual({
			advanced: true,
			previousMark: null,
			mark: '9',
			passed: [true, true, true, true, true],
		});
		expect(await rowOf(scope)).toMatchObject({ kind: 'number', mark: '9', previous_mark: null });
	});

	it('later: only values above the mark pass, a value equal to it does not, and the mark moves up', async () => {
		const scope = newScope();
		await advance(scope, [10]);
		const values = [9, 10, 11, 12, 12, '10.5'];
		const outcome = await advance(scope, values);
		expect(passedValues(values, outcome)).toEqual([11, 12, 12, '10.5']);
		expect(outcome).toMatchObject({ advanced: true, previousMark: '10', mark: '12' });
		expect(await rowOf(scope)).toMatchObject({ mark: '12', previous_mark: '10' });
	});

	it('nothing higher: nothing passes and the row is not written (same row version)', async () => {
		const scope = newScope();
		await advance(scope, [10]);
		const before = await rowOf(scope);
		const outcome = await advance(scope, [3, 10, 7]);
		expect(outcome).toEqual({
			advanced: false,
			previousMark: null,
			mark: '10',
			passed: [false, false, false],
		});
		expect(await rowOf(scope)).toEqual(before);
	});

	it('numbers past 2^53 sent as text compare by every digit', async () => {
		const scope = newScope();
		await advance(scope, ['9007199254740993000']);
		const values = ['9007199254740993000', '9007199254740993001'];
		expect(passedValues(values, await advance(scope, values))).toEqual(['9007199254740993001']);
	});

	it('dates compare as instants, whatever their offsets, to the microsecond', async () => {
		const scope = newScope();
		await advance(scope, ['2024-08-09T13:44:16.000001Z'], 'date');
		const values = [
			'2024-08-09T15:44:16+02:00', // one microsecond earlier than the mark
			'Fri, 09 Aug 2024 13:44:16 GMT',
			'2024-08-09T13:44:16.000002Z',
			'2024-08-09T09:44:17-04:00',
		];
		const outcome = await advance(scope, values, 'date');
		expect(passedValues(values, outcome)).toEqual([
			'2024-08-09T13:44:16.000002Z',
			'2024-08-09T09:44:17-04:00',
		]);
		expect(outcome.mark).toBe('2024-08-09T13:44:17.000000Z');
	});

	it('a scope that holds numbers refuses dates (and the reverse), changing nothing', async () => {
		const scope = newScope();
		await advance(scope, [10]);
		await expect(advance(scope, ['2030-01-01T00:00:00Z'], 'date')).rejects.toThrow(
			`the scope "${scope}" holds a watermark of numbers (Value Is Higher), so it cannot compare dates`,
		);
		expect(await rowOf(scope)).toMatchObject({ kind: 'number', mark: '10' });
		const dates = newScope();
		await advance(dates, ['2030-01-01T00:00:00Z'], 'date');
		await expect(advance(dates, [99999999999999], 'number')).rejects.toThrow(
			'holds a watermark of dates (Value Is a Date Later), so it cannot compare numbers',
		);
	});

	it('each scope has its own mark', async () => {
		const [a, b] = [newScope(), newScope()];
		await advance(a, [100]);
		expect((await advance(b, [5])).passed).toEqual([true]);
		expect((await advance(a, [50])).passed).toEqual([false]);
	});

	it('a statement sent again with the same claim id after its first attempt committed gives the same answer', async () => {
		const scope = newScope();
		await advance(scope, [10]);
		const claimId = newClaimId();
		const first = await advance(scope, [9, 11, 12], 'number', claimId);
		const again = await advance(scope, [9, 11, 12], 'number', claimId);
		expect(again).toEqual(first);
		expect(first.passed).toEqual([false, true, true]);
		expect(await rowOf(scope)).toMatchObject({ mark: '12', previous_mark: '10' });
	});
});

describe('overlapping executions (8 at once, pooled connections)', () => {
	const ROUNDS = 100;

	/** Every execution brings the shared values, in its own order, and values of its own. */
	function batches(round: number): number[][] {
		const shared = Array.from({ length: 20 }, (_, i) => round * 1000 + i);
		return Array.from({ length: EXECUTIONS }, (_, e) => [
			...[...shared].sort(() => Math.random() - 0.5),
			round * 1000 + 100 + e * 7,
		]);
	}

	async function overlappingRound(scope: string, round: number) {
		const inputs = batches(round);
		const outcomes = await Promise.all(inputs.map((values) => advance(scope, values)));
		const passes = new Map<number, number>();
		outcomes.forEach((outcome, e) =>
			passedValues(inputs[e], outcome).forEach((value) =>
				passes.set(value as number, (passes.get(value as number) ?? 0) + 1),
			),
		);
		return { inputs, outcomes, passes };
	}

	it(`a scope's first executions (no row yet), ${ROUNDS} rounds: each shared value passes exactly once`, async () => {
		const twice: string[] = [];
		const missed: string[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			const { inputs, passes } = await overlappingRound(newScope(), round);
			for (const value of inputs[0].slice(0, 20)) {
				const count = passes.get(value) ?? 0;
				if (count > 1) twice.push(`round ${round}: ${value} passed ${count} times`);
				if (count === 0) missed.push(`round ${round}: ${value}`);
			}
			expect([...passes.values()].every((count) => count === 1)).toBe(true);
		}
		expect(twice).toEqual([]);
		expect(missed).toEqual([]);
	});

	it(`an existing mark, ${ROUNDS} rounds on one scope: no value passes twice, and the passes tile the marks`, async () => {
		const scope = newScope();
		await advance(scope, [-1]);
		const twice: string[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			const { inputs, outcomes, passes } = await overlappingRound(scope, round);
			for (const [value, count] of passes)
				if (count > 1) twice.push(`round ${round}: ${value} passed ${count} times`);
			// The executions that advanced, in mark order, each took the interval after the one before.
			const advanced = outcomes.filter((o) => o.advanced).sort((a, b) => +a.mark! - +b.mark!);
			for (let i = 1; i < advanced.length; i++)
				expect(advanced[i].previousMark).toBe(advanced[i - 1].mark);
			expect(advanced.at(-1)!.mark).toBe(String(Math.max(...inputs.flat())));
			for (const value of inputs[0].slice(0, 20)) expect(passes.get(value)).toBe(1);
		}
		expect(twice).toEqual([]);
	});
});

describe('an execution that waits for another one (a transaction held open by the test)', () => {
	let holder: PoolClient;
	beforeEach(async () => {
		holder = await admin.connect();
	});
	afterEach(() => holder.release());

	/** Runs the node's own statement for `values` in an open transaction on the holder's connection. */
	async function holdAdvance(scope: string, values: number[]) {
		await holder.query('BEGIN');
		// The node's advance, handed the holder's connection: it stays checked out, the transaction open.
		const onHolder = {
			connect: async () => ({
				query: holder.query.bind(holder),
				on: () => undefined,
				release: () => undefined,
			}),
		} as unknown as Pool;
		await advanceWatermark(onHolder, ref, {
			scope,
			kind: 'number',
			values: values.map((v) => markValue(v, 'number')),
			claimId: newClaimId(),
			createIfMissing: false,
		});
	}

	const waitUntilBlocked = () =>
		waitFor(
			async () =>
				(
					await admin.query(
						"SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH input AS%'",
					)
				).rows.length > 0,
			5_000,
			'the second execution waiting for the first',
		);

	it.each([
		['the first-ever insert of a scope', null],
		['an existing mark', 4],
	])(
		'%s: the waiting execution compares with the mark the first one committed',
		async (_, initial) => {
			const scope = newScope();
			if (initial !== null) await advance(scope, [initial]);
			await holdAdvance(scope, [5, 6]);
			const waiting = advance(scope, [5, 6, 7]);
			await waitUntilBlocked();
			await holder.query('COMMIT');
			const outcome = await waiting;
			expect(outcome).toMatchObject({ advanced: true, previousMark: '6', mark: '7' });
			expect(outcome.passed).toEqual([false, false, true]);
		},
	);

	it('a waiting execution with nothing above the committed mark passes nothing', async () => {
		const scope = newScope();
		await advance(scope, [1]);
		await holdAdvance(scope, [10]);
		const waiting = advance(scope, [5, 10]);
		await waitUntilBlocked();
		await holder.query('COMMIT');
		expect((await waiting).passed).toEqual([false, false]);
	});
});

describe('the watermark table', () => {
	it('is created by Create Table If Missing, quoted, beside the claim table', async () => {
		const claimTable = uniqueTableName('WmCase');
		const own = watermarkRef(tableRef('public', claimTable));
		expect(own.qualified).toBe(`"public"."${claimTable}_watermarks"`);
		await advanceWatermark(pool, own, {
			scope: 's',
			kind: 'number',
			values: ['1'],
			claimId: newClaimId(),
			createIfMissing: true,
		});
		const { rows } = await admin.query(
			`SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
			[`${claimTable}_watermarks`],
		);
		expect(rows.map((r) => r.column_name)).toEqual([
			'advanced_at',
			'scope',
			'kind',
			'mark',
			'previous_mark',
			'advanced_by',
		]);
	});

	it('without Create Table If Missing, a missing table is an error naming it', async () => {
		const own = watermarkRef(tableRef('public', uniqueTableName('wm_off')));
		await expect(
			advanceWatermark(pool, own, {
				scope: 's',
				kind: 'number',
				values: ['1'],
				claimId: newClaimId(),
				createIfMissing: false,
			}),
		).rejects.toThrow(
			`table public.${own.table} does not exist; turn on "Create Table If Missing"`,
		);
	});

	it('a claim table name too long for the suffix gets a hashed name within 63 bytes', () => {
		const long = 'a'.repeat(60);
		const { table } = watermarkRef(tableRef('public', long));
		expect(table.length).toBeLessThanOrEqual(63);
		expect(table).toMatch(/^a+_[0-9a-f]{8}_watermarks$/);
		expect(watermarkRef(tableRef('public', `${long}b`)).table).not.toBe(table);
	});
});
