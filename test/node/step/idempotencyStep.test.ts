/**
 * Idempotency Step's execute() on a real Postgres, after a real claim: what each output gets on a first
 * run, a rerun after Finish, a rerun by a takeover after the first run died, and the rows it leaves.
 */
import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../../nodes/Idempotency/IdempotencyKey.node';
import { IdempotencyStep } from '../../../nodes/Idempotency/IdempotencyStep.node';
import { stepKey } from '../../../nodes/Idempotency/step/stepKey';
import { executeContext, webhookItem } from '../../../harness/node/executeContext';
import { databaseClock } from '../../support/databaseClock';
import { testCredentials, testPool, uniqueTableName } from '../../support/database';

const clock = databaseClock();
const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();
const stepNode = new IdempotencyStep();

const LEASE_SECONDS = 300;

async function claim(table: string, id: string): Promise<INodeExecutionData> {
	const [created] = await claimNode.execute.call(
		executeContext([webhookItem(JSON.stringify({ id }))], {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: LEASE_SECONDS,
				options: { table },
			},
			credentials: testCredentials(),
		}),
	);
	expect(created).toHaveLength(1);
	return created[0];
}

/** The Step node with the item's idempotency fields mapped, as the defaults do in n8n. */
function runStep(
	items: INodeExecutionData[],
	parameters: IDataObject,
	options: { onError?: INode['onError'] } = {},
) {
	return stepNode.execute.call(
		executeContext(items, {
			parameters,
			perItem: (name, index) => {
				const result = (items[index].json.idempotency ?? {}) as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return result.claimId;
				return undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Step',
			nodeType: 'idempotencyStep',
			onError: options.onError,
		}),
	);
}

const start = (
	table: string,
	items: INodeExecutionData[],
	options: IDataObject = {},
	onError?: INode['onError'],
) =>
	runStep(
		items,
		{ operation: 'start', stepName: 'charge card', options: { table, ...options } },
		{ onError },
	);

const finish = (
	table: string,
	items: INodeExecutionData[],
	options: IDataObject = {},
	extra: IDataObject = {},
) =>
	runStep(items, {
		operation: 'finish',
		stepName: 'charge card',
		options: { table, ...options },
		...extra,
	});

const stepOf = (item: INodeExecutionData) =>
	(item.json.idempotency as IDataObject).step as IDataObject;

/** The step table's rows; none where no step was ever started (the table is made on the first start). */
async function stepRows(table: string) {
	const exists = await admin.query(`SELECT to_regclass('${table}_steps') IS NOT NULL AS made`);
	if (!exists.rows[0].made) return [];
	const { rows } = await admin.query(
		`SELECT key, step, attempts, claim_id, finished_at IS NOT NULL AS finished, result FROM ${table}_steps ORDER BY key, step`,
	);
	return rows;
}

/** The claim's lease ends (its execution died) and the provider's retry takes the event over. */
async function takeOver(table: string, id: string): Promise<INodeExecutionData> {
	await clock.passLeasesOf(table);
	const retried = await claim(table, id);
	expect(retried.json.idempotency).toMatchObject({ isNew: true, reclaimed: true });
	return retried;
}

describe('Idempotency Step: Start Step', () => {
	it('runs a step the first time, then gives Done with the result recorded by Finish', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_1');
		const [run, done, uncertain] = await start(table, [claimed]);
		expect([run.length, done.length, uncertain.length]).toEqual([1, 0, 0]);
		expect(stepOf(run[0])).toMatchObject({
			name: 'charge card',
			key: stepKey('evt:evt_1', 'charge card'),
			attempt: 1,
			status: 'run',
		});
		expect(run[0].pairedItem).toEqual({ item: 0 });

		// The HTTP Request's answer replaces the item's json; the claim's fields are mapped back.
		const answered: INodeExecutionData = {
			json: { chargeId: 'ch_1', idempotency: claimed.json.idempotency },
		};
		const [[finished]] = await finish(table, [answered]);
		expect(stepOf(finished)).toMatchObject({ status: 'finished' });
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({
				key: 'evt:evt_1',
				attempts: 1,
				finished: true,
				result: { chargeId: 'ch_1' },
			}),
		]);

		// The same execution reaches the step again (a loop, a retried branch): Done, with the result.
		const [again, doneAgain] = await start(table, [claimed]);
		expect(again).toHaveLength(0);
		expect(stepOf(doneAgain[0])).toMatchObject({
			status: 'done',
			attempt: 1,
			result: { chargeId: 'ch_1' },
			key: stepKey('evt:evt_1', 'charge card'),
		});
	});

	it('a rerun by a takeover, after a start without Finish, goes to Uncertain; the step is not run again', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_2');
		const [run] = await start(table, [first]);
		expect(run).toHaveLength(1);
		// The execution dies here, between the step and Finish.
		const retried = await takeOver(table, 'evt_2');
		const [rerun, done, uncertain] = await start(table, [retried]);
		expect([rerun.length, done.length]).toEqual([0, 0]);
		expect(stepOf(uncertain[0])).toMatchObject({ status: 'uncertain', attempt: 1 });
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ attempts: 1, finished: false }),
		]);
	});

	it('with Service Honours the Key the takeover runs it again: attempt 2, the same step key', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_3');
		const [[firstRun]] = await start(table, [first], { serviceHonoursKey: true });
		const retried = await takeOver(table, 'evt_3');
		const [[rerun], done, uncertain] = await start(table, [retried], { serviceHonoursKey: true });
		expect([done.length, uncertain.length]).toEqual([0, 0]);
		expect(stepOf(rerun)).toMatchObject({ status: 'run', attempt: 2 });
		expect(stepOf(rerun).key).toBe(stepOf(firstRun).key);
		const retriedClaimId = (retried.json.idempotency as IDataObject).claimId;
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ attempts: 2, claim_id: retriedClaimId, finished: false }),
		]);
		// The first run's execution is not the holder any more: its late Finish is refused.
		await expect(finish(table, [first])).rejects.toThrow(/not held by this execution's claim ID/);
	});

	it.each([false, true])(
		'concurrent starts of one step by its holder give exactly one Run (Service Honours the Key: %s)',
		async (serviceHonoursKey) => {
			const table = uniqueTableName('step');
			const claimed = await claim(table, 'evt_4');
			// The first of them also makes the step table.
			const results = await Promise.all(
				Array.from({ length: 12 }, () => start(table, [claimed], { serviceHonoursKey })),
			);
			const runs = results.flatMap(([run]) => run);
			const uncertain = results.flatMap(([, , maybe]) => maybe);
			expect(runs).toHaveLength(1);
			expect(uncertain).toHaveLength(11);
			expect(await stepRows(table)).toEqual([expect.objectContaining({ attempts: 1 })]);
		},
	);

	it('refuses a start for an execution that does not hold the claim, naming the item', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_5');
		await takeOver(table, 'evt_5');
		await expect(start(table, [first])).rejects.toThrow(
			/Item 0: step "charge card" was not started: the claim of "evt:evt_5" is not held/,
		);
		// Under "Continue (regular output)" it leaves on Uncertain, marked, and nothing was started.
		const [run, , uncertain] = await start(table, [first], {}, 'continueRegularOutput');
		expect(run).toHaveLength(0);
		expect(uncertain[0].json).toMatchObject({ error: 'not_held' });
		expect(await stepRows(table)).toEqual([]);
		// Under "Continue (using error output)" it leaves on the first output holding only the error, for n8n to move.
		const [[failed]] = await start(table, [first], {}, 'continueErrorOutput');
		expect(failed.json).toEqual({ error: 'not_held', message: expect.stringMatching(/^Item 0: /) });
	});

	it("a refused item stops the node without a Continue setting: the batch's other steps are not left started", async () => {
		const table = uniqueTableName('step');
		const held = await claim(table, 'evt_23');
		const stale = await claim(table, 'evt_24');
		await takeOver(table, 'evt_24');
		await expect(start(table, [held, stale])).rejects.toThrow(
			/Item 1: step "charge card" was not started: the claim of "evt:evt_24" is not held/,
		);
		// evt_23's Run never left the node, so its step never ran. Before the fix its mark stayed, and the
		// event's next run took Uncertain (a person) for a step that never happened.
		expect(await stepRows(table)).toEqual([]);
		const [[run]] = await start(table, [held]);
		expect(stepOf(run)).toMatchObject({ status: 'run', attempt: 1 });
	});

	it('refuses a completed claim: Complete ended the run', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_6');
		await completeClaim(table, claimed);
		await expect(start(table, [claimed])).rejects.toThrow(/not held/);
	});

	it('refuses a step name that is not a short plain name', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_7');
		for (const bad of ['', '  ', 'charge {{ $now }}', 'x'.repeat(65), 'a;DROP TABLE t']) {
			await expect(
				runStep([claimed], { operation: 'start', stepName: bad, options: { table } }),
			).rejects.toThrow(/Item 0: the Step Name .* is not allowed/);
		}
		// Before the fix: 'the Step Name 5 is not allowed: use 1–64 letters, digits …', which 5 is.
		for (const [bad, kind] of [
			[5, 'a number \\(5\\)'],
			[{ name: 'x' }, 'an object'],
			[['x'], 'an array'],
		] as const) {
			await expect(
				runStep([claimed], { operation: 'start', stepName: bad, options: { table } }),
			).rejects.toThrow(new RegExp(`Item 0: the Step Name is ${kind}.*, not text`));
		}
	});

	it('refuses two starts of one step of one event in one execution', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_8');
		const [run, , uncertain] = await start(table, [claimed, claimed], {}, 'continueRegularOutput');
		expect(run).toHaveLength(1);
		expect(uncertain[0].json.message).toMatch(
			/Item 1: step "charge card" of "evt:evt_8" is started twice/,
		);
	});
});

async function completeClaim(table: string, claimed: INodeExecutionData) {
	return keyNode.execute.call(
		executeContext([claimed], {
			parameters: { operation: 'complete', options: { table } },
			perItem: (name) => (claimed.json.idempotency as IDataObject)[name],
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
		}),
	);
}

describe('Idempotency Step: Finish Step', () => {
	it('refuses a result larger than Max Result Size, naming the item and the size; the step stays started', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_9');
		await start(table, [claimed]);
		const big: INodeExecutionData = {
			json: { blob: 'x'.repeat(3000), idempotency: claimed.json.idempotency },
		};
		await expect(finish(table, [big], { maxResultKib: 2 })).rejects.toThrow(
			/Item 0: the result of step "charge card" is 2\.9 KiB \(3011 bytes\), more than Max Result Size \(2 KiB\); the step stays started/,
		);
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ finished: false, result: null }),
		]);
		// A custom result within the limit finishes it.
		const [[finished]] = await finish(
			table,
			[big],
			{ maxResultKib: 2 },
			{
				resultSource: 'custom',
				resultJson: '{"ok": true}',
			},
		);
		expect(stepOf(finished).status).toBe('finished');
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ finished: true, result: { ok: true } }),
		]);
	});

	it('refuses every finish of a step that two items of one execution finish; the step stays started', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_16');
		const other = await claim(table, 'evt_19');
		await start(table, [claimed, other]);
		// A node before Finish Step split the step's answer into two items, both paired with the event.
		const pages = [1, 2].map((page) => ({ json: { page, idempotency: claimed.json.idempotency } }));
		const [out] = await runStep(
			[...pages, other],
			{ operation: 'finish', stepName: 'charge card', options: { table } },
			{ onError: 'continueErrorOutput' },
		);
		expect(out.map((item) => item.json.error ?? stepOf(item).status)).toEqual([
			'configuration',
			'configuration',
			'finished',
		]);
		expect(out[1].json.message).toMatch(
			/^Item 1: step "charge card" of "evt:evt_16" is finished by items 0, 1 of this execution: .* the step stays started/,
		);
		// Before the fix: both said finished, and Postgres recorded either page as the step's result.
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ key: 'evt:evt_16', finished: false, result: null }),
			expect.objectContaining({ key: 'evt:evt_19', finished: true }),
		]);
	});

	it('refuses a Finish without a Start by item, also before any step table exists; a Start then works', async () => {
		const table = uniqueTableName('step');
		const claimed = await claim(table, 'evt_17');
		// Before the fix: the whole batch failed with 'relation "…_steps" does not exist', no item or step named.
		await expect(finish(table, [claimed])).rejects.toThrow(
			/^Item 0: step "charge card" of "evt:evt_17" was not started by this execution/,
		);
		expect(await stepRows(table)).toEqual([]);
		const [run] = await start(table, [claimed]);
		expect(stepOf(run[0]).status).toBe('run');
		const [[finished]] = await finish(table, [claimed]);
		expect(stepOf(finished).status).toBe('finished');
		// A claim table gone since the process last read it is said to be gone, not a Finish without a Start.
		await admin.query(`DROP TABLE ${table}`);
		await expect(finish(table, [claimed])).rejects.toThrow(/does not exist/);
		await expect(finish(table, [claimed])).rejects.not.toThrow(/not started/);
	});

	it('refuses to finish a step this execution did not start', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_10');
		await start(table, [first]);
		const retried = await takeOver(table, 'evt_10');
		// The takeover got Uncertain; finishing it instead of checking by hand is refused.
		await expect(finish(table, [retried])).rejects.toThrow(/was not started by this execution/);
	});
});

describe('Idempotency Step: Forget Step, and Complete', () => {
	it('Forget Step lets the next run run an Uncertain step; recording a result makes it Done', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_11');
		await start(table, [first]);
		const retried = await takeOver(table, 'evt_11');
		const forget = (extra: IDataObject) =>
			runStep([retried], {
				operation: 'forget',
				stepName: 'charge card',
				options: { table },
				...extra,
			});
		const [[recorded]] = await forget({
			recordResult: true,
			resultJson: '{"chargeId":"ch_found"}',
		});
		expect(stepOf(recorded).status).toBe('recorded');
		const [, [done]] = await start(table, [retried]);
		expect(stepOf(done)).toMatchObject({ status: 'done', result: { chargeId: 'ch_found' } });

		const [[forgotten]] = await forget({});
		expect(stepOf(forgotten).status).toBe('forgotten');
		const [[run]] = await start(table, [retried]);
		expect(stepOf(run)).toMatchObject({ status: 'run', attempt: 1 });
		const [[again]] = await forget({});
		const [[gone]] = await forget({});
		expect([stepOf(again).status, stepOf(gone).status]).toEqual(['forgotten', 'not_found']);
	});

	it('Forget Step records a result only on a mark a run made: a mistyped step or key is not_found', async () => {
		const table = uniqueTableName('step');
		const first = await claim(table, 'evt_18');
		await start(table, [first]);
		const retried = await takeOver(table, 'evt_18');
		const record = (stepName: string, key: string) =>
			runStep([{ json: { idempotency: { key } } }], {
				operation: 'forget',
				stepName,
				recordResult: true,
				resultJson: '{"chargeId":"ch_found"}',
				options: { table },
			});
		// Before the fix: both said recorded, and made marks no run asks for.
		const [[wrongStep]] = await record('charge Card', 'evt:evt_18');
		const [[wrongKey]] = await record('charge card', 'evt:evt_81');
		expect([stepOf(wrongStep).status, stepOf(wrongKey).status]).toEqual(['not_found', 'not_found']);
		expect(await stepRows(table)).toEqual([
			expect.objectContaining({ key: 'evt:evt_18', step: 'charge card', finished: false }),
		]);
		const [, , [uncertain]] = await start(table, [retried]);
		expect(stepOf(uncertain).status).toBe('uncertain');
		const [[recorded]] = await record('charge card', 'evt:evt_18');
		expect(stepOf(recorded).status).toBe('recorded');
	});

	it('Forget Step failing part-way reports the items it already forgot as forgotten, not failed', async () => {
		const table = uniqueTableName('step');
		const claimed = [];
		for (const id of ['evt_20', 'evt_21', 'evt_22']) claimed.push(await claim(table, id));
		await start(table, claimed);
		// The server refuses the second item's DELETE (as a lock time-out or a lost connection would).
		await admin.query(
			`CREATE FUNCTION ${table}_refuse() RETURNS trigger LANGUAGE plpgsql AS ` +
				`$$ BEGIN IF OLD.key = 'evt:evt_21' THEN RAISE EXCEPTION 'refused'; END IF; RETURN OLD; END $$`,
		);
		await admin.query(
			`CREATE TRIGGER refuse BEFORE DELETE ON ${table}_steps FOR EACH ROW EXECUTE FUNCTION ${table}_refuse()`,
		);
		const [out] = await runStep(
			claimed,
			{ operation: 'forget', stepName: 'charge card', options: { table } },
			{ onError: 'continueErrorOutput' },
		);
		// Before the fix: all three failed, though evt_20's mark was deleted.
		expect(out.map((item) => [item.pairedItem, item.json.error ?? stepOf(item).status])).toEqual([
			[{ item: 0 }, 'forgotten'],
			[{ item: 1 }, 'database'],
			[{ item: 2 }, 'database'],
		]);
		expect((await stepRows(table)).map((row) => row.key)).toEqual(['evt:evt_21', 'evt:evt_22']);
	});

	it("Complete and Release delete the event's step rows, and only that event's", async () => {
		const table = uniqueTableName('step');
		const done = await claim(table, 'evt_12');
		const failed = await claim(table, 'evt_13');
		const other = await claim(table, 'evt_14');
		await start(table, [done, failed, other]);
		expect(await stepRows(table)).toHaveLength(3);
		await completeClaim(table, done);
		expect((await stepRows(table)).map((row) => row.key)).toEqual(['evt:evt_13', 'evt:evt_14']);
		await keyNode.execute.call(
			executeContext([failed], {
				parameters: { operation: 'release', options: { table } },
				perItem: (name) => (failed.json.idempotency as IDataObject)[name],
				credentials: testCredentials(),
				nodeName: 'Idempotency Key',
				nodeType: 'idempotencyKey',
			}),
		);
		expect((await stepRows(table)).map((row) => row.key)).toEqual(['evt:evt_14']);
	});
});
