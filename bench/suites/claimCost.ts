// Where a claim's time goes: the steps from a bare `INSERT … ON CONFLICT (key) DO NOTHING` to the node's
// execute(), each run in the same interleaved rounds on the same table, so each step's price shows as a
// ratio to the step before it. Sections 1 and 2 give the totals;
// this one splits them.
import { randomBytes } from 'node:crypto';

import { ratioRow, type Benchmark } from '../lib/benchmark';
import { freshIds, keyOf, nodeClaimer } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, formatRatio, median } from '../lib/stats';

const TABLE = 'bench_claim_cost';
const QUALIFIED = `public.${TABLE}`;
const BATCH = 10_000;

interface Step {
	label: string;
	/** What this step adds to the one before it. */
	adds: string;
	/** The step whose price this one adds to (default: the one before). */
	builtOn?: number;
	/** Rows it answers for a block of n keys (default n); a bare DO NOTHING answers none for repeats. */
	expectRows?: (n: number, repeat: boolean) => number;
	/** Builds what the timed part needs (n8n's items, outside the timer) and returns the timed part: it
	 * claims the keys (one call per key, or all in one call) and answers how many rows came back. */
	prepare(keys: string[]): () => Promise<number>;
}

interface Scenario {
	name: string;
	/** Keys per call: 1 (one execution per event) or BATCH. */
	perCall: number;
	/** Whether the keys are in the table before the step runs (a repeat delivery). */
	repeat: boolean;
	steps: Step[];
}

interface BatchAnswer {
	key: string | null;
	fresh: number | null;
}

interface StepResult {
	step: Step;
	msPerKey: number;
	vsBare: number;
	vsPrevious: number;
}

export const title = "2b. Where a claim's time goes";
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	await pool.query(`DROP TABLE IF EXISTS ${QUALIFIED}`);
	const counting = nodeClaimer(dist, credentials, TABLE, true);
	const readOnly = nodeClaimer(dist, credentials, TABLE, false);
	// The node creates the table (every column) on its first execution; keep that out of the timing.
	await counting.run(counting.prepare(freshIds(1)));
	const table = {
		pool,
		ref: dist.internals.tableRef('public', TABLE),
		capabilities: {
			counters: true,
			leases: true,
			fingerprint: true,
			responses: true,
			events: false,
			eventScope: false,
		},
		layout: dist.internals.layoutOf(
			new Map(
				['claim_token', 'fingerprint'].map((name) => [
					name,
					{ type: 'bytea', deterministic: true },
				]),
			),
		),
	};
	const statement = (mode: 'counting' | 'readOnly', single: boolean) =>
		dist.internals.claimStatement(table, { mode, single });

	// The claim ID as the node's table keeps it: 12 bytes.
	const claimId = () => randomBytes(12);
	const prepared = (name: string, text: string) => (values: unknown[]) =>
		pool.query({ name: `bench_cost_${name}`, text, values });
	const bareSql = `INSERT INTO ${QUALIFIED} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`;
	const bare = prepared('bare', bareSql);
	// The columns a claim-once row of the node keeps: when it came and who claimed it.
	const nodeRow = prepared(
		'row',
		`INSERT INTO ${QUALIFIED} (key, first_seen, claim_token) VALUES ($1, now(), $2) ON CONFLICT (key) DO NOTHING RETURNING key`,
	);
	const bareCounting = prepared(
		'counting',
		`INSERT INTO ${QUALIFIED} AS e (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET last_seen = now(), deliveries = COALESCE(e.deliveries, 1) + 1 RETURNING key`,
	);
	// A one-key statement takes the key, a batch statement the array of keys; no fingerprints.
	const nodeStatement = (statement: { name: string; text: string }) => (keys: string | string[]) =>
		pool.query({
			name: `bench_cost_${statement.name}`,
			text: statement.text,
			values: [keys, null, claimId(), null],
		});
	const batchBareSql = `INSERT INTO ${QUALIFIED} (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key`;
	const batchRow = prepared(
		'batch_row',
		`INSERT INTO ${QUALIFIED} (key, first_seen, claim_token) SELECT k, now(), $2 FROM unnest($1::text[]) AS k ON CONFLICT (key) DO NOTHING RETURNING key`,
	);

	const eachKey =
		(claim: (key: string) => Promise<{ rowCount: number | null }>) =>
		(keys: string[]) =>
		async () => {
			let rows = 0;
			for (const key of keys) rows += (await claim(key)).rowCount ?? 0;
			return rows;
		};
	const idOf = (key: string) => key.slice('evt:'.length);
	const eachExecution =
		(claimer: ReturnType<typeof nodeClaimer>, routed: 0 | 1) => (keys: string[]) => {
			const contexts = keys.map((key) => claimer.prepare([idOf(key)]));
			return async () => {
				let rows = 0;
				for (const context of contexts) rows += (await claimer.run(context))[routed].length;
				return rows;
			};
		};
	const oneExecution =
		(claimer: ReturnType<typeof nodeClaimer>, routed: 0 | 1) => (keys: string[]) => {
			const context = claimer.prepare(keys.map(idOf));
			return async () => (await claimer.run(context))[routed].length;
		};
	const oneStatement =
		(claim: (keys: string[]) => Promise<{ rowCount: number | null }>) =>
		(keys: string[]) =>
		async () =>
			(await claim(keys)).rowCount ?? 0;
	// The node's batch statement answers one summary row (the count of keys it inserted) and a row per repeat.
	const batchStatement =
		(claim: (keys: string[]) => Promise<{ rows: BatchAnswer[] }>) =>
		(keys: string[]) =>
		async () => {
			const { rows } = await claim(keys);
			return rows.reduce((n, row) => n + (row.key === null ? (row.fresh ?? 0) : 1), 0);
		};

	const noRowsForRepeats = (n: number, repeat: boolean) => (repeat ? 0 : n);
	const bareStep: Step = {
		label: 'bare `INSERT (key) … DO NOTHING RETURNING key`, unnamed',
		adds: 'the baseline of section 1',
		expectRows: noRowsForRepeats,
		prepare: eachKey((key) => pool.query(bareSql, [key])),
	};
	const preparedStep: Step = {
		label: 'the same, prepared once per connection',
		adds: 'no parse and plan per claim (the node prepares its statement too)',
		expectRows: noRowsForRepeats,
		prepare: eachKey((key) => bare([key])),
	};
	const scenarios: Scenario[] = [
		{
			name: '1 item, new key',
			perCall: 1,
			repeat: false,
			steps: [
				bareStep,
				preparedStep,
				{
					label: 'the row a claim-once row keeps',
					adds: 'first_seen and the 12 bytes of the claim ID written with the key',
					prepare: eachKey((key) => nodeRow([key, claimId()])),
				},
				{
					label: "the node's one-key statement, sent directly",
					adds: "`DO UPDATE` for repeats, the row's state returned (first seen, counters, status, payload match)",
					prepare: eachKey(nodeStatement(statement('counting', true))),
				},
				{
					label: 'node execute(), one webhook item',
					adds: "key derivation, pool checkout, retry guard, outcome and output item (the node's JavaScript)",
					prepare: eachExecution(counting, 0),
				},
			],
		},
		{
			name: '1 item, repeat of a key',
			perCall: 1,
			repeat: true,
			steps: [
				bareStep,
				preparedStep,
				{
					label: "the node's read-only one-key statement, sent directly",
					adds: 'the stored row read first (first seen, last seen, status, payload match) to route the repeat',
					prepare: eachKey(nodeStatement(statement('readOnly', true))),
				},
				{
					label: 'node execute(), Count Repeats off',
					adds: "the node's JavaScript",
					prepare: eachExecution(readOnly, 1),
				},
				{
					label: 'bare counting upsert (`DO UPDATE SET last_seen, deliveries + 1`), prepared',
					adds: 'a row write and a commit flush per repeat (vs step 2, which writes nothing)',
					builtOn: 1,
					prepare: eachKey((key) => bareCounting([key])),
				},
				{
					label: "the node's counting one-key statement, sent directly",
					adds: "the row's state returned; a repeat commits without waiting for its WAL flush",
					prepare: eachKey(nodeStatement(statement('counting', true))),
				},
				{
					label: 'node execute(), Count Repeats on (the default)',
					adds: "the node's JavaScript",
					prepare: eachExecution(counting, 1),
				},
			],
		},
		{
			name: '10,000 items, new keys',
			perCall: BATCH,
			repeat: false,
			steps: [
				{
					label: 'bare `INSERT (key) SELECT unnest($1) … DO NOTHING RETURNING key`, unnamed',
					adds: 'the baseline of section 2',
					prepare: oneStatement((keys) => pool.query(batchBareSql, [keys])),
				},
				{
					label: 'the rows claim-once rows keep, prepared',
					adds: 'first_seen, last_seen, claim_token written with each key',
					prepare: oneStatement((keys) => batchRow([keys, claimId()])),
				},
				{
					label: "the node's statement, sent directly",
					adds: 'sorted pass, `DO UPDATE` for repeats, one summary row returned (no row per new key)',
					prepare: batchStatement(nodeStatement(statement('counting', false))),
				},
				{
					label: 'node execute(), one execution of 10,000 webhook items',
					adds: "key derivation, the output items (the node's JavaScript)",
					prepare: oneExecution(counting, 0),
				},
			],
		},
	];

	const rounds = quick ? 3 : 15;
	const block = quick ? 40 : 150;
	const batchRounds = quick ? 2 : 7;
	const results = new Map<string, StepResult[]>();
	for (const scenario of scenarios) {
		const keysPerBlock = scenario.perCall === 1 ? block : scenario.perCall;
		const freshKeys = async () => {
			const keys = freshIds(keysPerBlock).map(keyOf);
			if (scenario.repeat) await pool.query(batchBareSql, [keys]);
			return keys;
		};
		const totalRounds = (scenario.perCall === 1 ? rounds : batchRounds) + 1;
		const perRound = await rotatedRounds(totalRounds, scenario.steps, async (step) => {
			const keys = await freshKeys();
			const claim = step.prepare(keys);
			const started = process.hrtime.bigint();
			const rows = await claim();
			const ms = elapsedMs(started);
			const expected = step.expectRows?.(keys.length, scenario.repeat) ?? keys.length;
			check(
				rows === expected,
				`${scenario.name}, ${step.label}: ${rows} rows answered, expected ${expected}`,
			);
			return ms / keys.length;
		});
		const msPerKey = perRound.slice(1); // round 0 warms up
		const ratioTo = (index: number, base: number) =>
			median(msPerKey.map((round) => round[index] / round[base]));
		const stepResults = scenario.steps.map((step, index) => ({
			step,
			msPerKey: median(msPerKey.map((round) => round[index])),
			vsBare: ratioTo(index, 0),
			vsPrevious: index === 0 ? 1 : ratioTo(index, step.builtOn ?? index - 1),
		}));
		results.set(scenario.name, stepResults);
		log(
			`claim cost ${scenario.name}: ${stepResults.map((r) => formatRatio(r.vsBare)).join(' → ')}`,
		);
	}

	const of = (scenario: string, index: number) => results.get(scenario)![index];
	return {
		rows: [
			ratioRow(
				"1-item new key: the node's statement sent directly ÷ bare INSERT (the SQL's share)",
				of('1 item, new key', 3).vsBare,
			),
			ratioRow(
				'1-item repeat, Count Repeats off: node ÷ bare INSERT',
				of('1 item, repeat of a key', 3).vsBare,
			),
			ratioRow(
				"10,000 new keys: the node's statement sent directly ÷ bare unnest (the SQL's share)",
				of('10,000 items, new keys', 2).vsBare,
			),
		],
		details: [
			`Every step of a scenario runs in each of ${rounds} rounds (batches: ${batchRounds}) after a warm-up round, in rotated order,`,
			`on one table created by the node (every column), ${block} fresh keys per step and round (batches: ${BATCH.toLocaleString('en')});`,
			'repeats are keys inserted just before. Values are medians over rounds; the ratios are medians of',
			'per-round ratios. Statements are sent with the same pg.Pool of 10 the raw side of sections 1 and 2 uses.',
			'',
			...scenarios.flatMap((scenario) => [
				`**${scenario.name}**`,
				'',
				'| step | what it adds | ms per key | × bare | × the step it adds to |',
				'|---|---|---:|---:|---:|',
				...results
					.get(scenario.name)!
					.map(
						(r, index) =>
							`| ${index + 1}. ${r.step.label} | ${r.step.adds} | ${formatMs(r.msPerKey)} | ${formatRatio(r.vsBare)} | ${index === 0 ? '' : `${formatRatio(r.vsPrevious)} (× step ${(r.step.builtOn ?? index - 1) + 1})`} |`,
					),
				'',
			]),
		].join('\n'),
	};
};
