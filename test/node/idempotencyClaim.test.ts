import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import {
	executeContext,
	webhookItem,
	type ContextOptions,
} from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

const node = new IdempotencyClaim();

async function run(
	items: INodeExecutionData[],
	parameters: IDataObject,
	extra: Partial<Pick<ContextOptions, 'continueOnFail' | 'credentials' | 'onError'>> = {},
) {
	const context = executeContext(items, {
		parameters: { keySource: 'auto', claimMode: 'once', ...parameters },
		credentials: testCredentials(),
		...extra,
	});
	return node.execute.call(context);
}

const keysOf = (output: INodeExecutionData[]) =>
	output.map((item) => (item.json.idempotency as IDataObject).key);

describe('Idempotency Claim node', () => {
	it('A, A again with another stripe-signature, B → New, Duplicate, New; json and binary pass through', async () => {
		const table = uniqueTableName('node');
		const params = { options: { table } };
		const a = () =>
			webhookItem('{"id":"evt_A","type":"charge.succeeded"}', {
				'stripe-signature': `t=${Math.random()}`,
			});
		const [newA, dupA0] = await run([a()], params);
		const [newA2, dupA] = await run([a()], params);
		const [newB, dupB] = await run([webhookItem('{"id":"evt_B"}')], params);
		expect([newA, dupA0, newA2, dupA, newB, dupB].map((output) => output.length)).toEqual([
			1, 0, 0, 1, 1, 0,
		]);
		expect(newA[0].json.body).toEqual({ id: 'evt_A', type: 'charge.succeeded' });
		expect(newA[0].binary?.data).toBeDefined();
		expect(newA[0].pairedItem).toEqual({ item: 0 });
		expect(newA[0].json.idempotency).toMatchObject({
			key: 'evt:evt_A',
			isNew: true,
			keySource: 'body_id',
			duplicateKind: null,
		});
		expect(dupA[0].json.idempotency).toMatchObject({
			key: 'evt:evt_A',
			isNew: false,
			duplicateKind: 'completed',
			deliveries: 2,
		});
		expect((dupA[0].json.idempotency as IDataObject).firstSeen).toBe(
			(newA[0].json.idempotency as IDataObject).firstSeen,
		);
		const rows = await admin.query(`SELECT key FROM ${table} ORDER BY key`);
		expect(rows.rows.map((r) => r.key)).toEqual(['evt:evt_A', 'evt:evt_B']);
	});

	it('a body without an id is keyed by the sha256 of its raw bytes; the same bytes again are a duplicate', async () => {
		const params = { options: { table: uniqueTableName('node') } };
		const [first] = await run([webhookItem('{"amount": 5}')], params);
		const [, second] = await run([webhookItem('{"amount": 5}')], params);
		expect(keysOf(first)[0]).toMatch(/^sha256:[0-9a-f]{64}$/);
		expect(keysOf(second)).toEqual(keysOf(first));
		expect((first[0].json.idempotency as IDataObject).keySource).toBe('raw_body');
	});

	it('routes in-batch repeats: first copy New, the rest Duplicate, each with pairedItem', async () => {
		const items = ['1', '2', '1', '1', '3'].map((id) => webhookItem(`{"id":"${id}"}`));
		const [created, duplicate] = await run(items, { options: { table: uniqueTableName('node') } });
		expect(keysOf(created)).toEqual(['evt:1', 'evt:2', 'evt:3']);
		expect(created.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 4 }]);
		expect(duplicate.map((i) => i.pairedItem)).toEqual([{ item: 2 }, { item: 3 }]);
	});

	it('takes the key from a header, a field, or an expression, with a scope prefix', async () => {
		const table = uniqueTableName('node');
		const item = webhookItem('{"data":{"object":{"id":"pi_1"}}}', { 'X-GitHub-Delivery': 'gh-7' });
		const [byHeader] = await run([item], {
			keySource: 'header',
			headerName: 'x-github-delivery',
			options: { table, scope: 'ci' },
		});
		const [byField] = await run([item], {
			keySource: 'field',
			fieldPath: 'body.data.object.id',
			options: { table },
		});
		const [byExpression] = await run([item], {
			keySource: 'expression',
			keyExpression: 'order-9',
			options: { table },
		});
		expect([...keysOf(byHeader), ...keysOf(byField), ...keysOf(byExpression)]).toEqual([
			'ci:evt:gh-7',
			'evt:pi_1',
			'order-9',
		]);
	});

	it('refuses an injected table name before sending any SQL', async () => {
		const evil = 'processed_events; DROP TABLE business_log';
		await expect(run([webhookItem('{"id":"x"}')], { options: { table: evil } })).rejects.toThrow(
			/Table name "processed_events; DROP TABLE business_log" is not allowed/,
		);
	});

	it('an item with no derivable key fails the execution naming the item; nothing is claimed', async () => {
		const table = uniqueTableName('node');
		const items = [webhookItem('{"id":"ok-1"}'), { json: { headers: {}, body: {} } }];
		const error = await run(items, { options: { table } }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toMatch(/^Item 1: no key: the body is empty/);
		const exists = await admin.query('SELECT to_regclass($1) AS t', [table]);
		// Key derivation fails before the claim: not even the good item was claimed, so a retry of the batch works.
		if (exists.rows[0].t)
			expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
	});

	it('with Continue On Fail the bad item carries its error and the others are still claimed', async () => {
		const items = [
			webhookItem('{"id":"ok-1"}'),
			{ json: { headers: {}, body: { id: { nested: true } } } },
			webhookItem('{"id":"ok-2"}'),
		];
		const [created] = await run(
			items,
			{ options: { table: uniqueTableName('node') } },
			{ continueOnFail: true },
		);
		const errors = created.filter((item) => item.json.error);
		expect(errors).toEqual([
			{
				// n8n 1.x moves an item to the error output only when its json is exactly {error, message}
				// (or {error}); any other key would leave it on New, where the business step runs.
				json: {
					error: 'bad_delivery',
					message: 'Item 1: body.id is an object; an id must be a string or a number',
				},
				pairedItem: { item: 1 },
			},
		]);
		expect(created.filter((item) => !item.json.error).map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 2 },
		]);
	});

	it('Postgres unreachable: a clear node error and no item on New', async () => {
		const credentials = testCredentials({ host: '127.0.0.1', port: 1 });
		const error = await run(
			[webhookItem('{"id":"x"}')],
			{ options: { table: uniqueTableName('node') } },
			{ credentials },
		).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toMatch(/^Connection refused at 127\.0\.0\.1:1/);
	});

	it('missing table with creation off: a clear error naming the table and the fix', async () => {
		const table = uniqueTableName('absent');
		await expect(
			run([webhookItem('{"id":"x"}')], { options: { table, createTable: false } }),
		).rejects.toThrow(`table public.${table} does not exist; turn on "Create Table If Missing"`);
	});

	it('permission denied: a clear error, the delivery stays unclaimed', async () => {
		const table = uniqueTableName('locked');
		const role = uniqueTableName('reader');
		await admin.query(
			`CREATE TABLE ${table} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader-pw'`);
		await admin.query(`GRANT SELECT ON ${table} TO ${role}`);
		const credentials = testCredentials({ user: role, password: 'reader-pw' });
		const error = await run(
			[webhookItem('{"id":"x"}')],
			{ options: { table, createTable: false } },
			{ credentials },
		).catch((e: unknown) => e);
		expect((error as Error).message).toBe(
			`table public.${table} cannot be used by role "${role}": it lacks INSERT, UPDATE (GRANT INSERT, UPDATE ON "public"."${table}" TO "${role}")`,
		);
		expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
	});

	it('odd ids have defined keys and none can inject SQL', async () => {
		const table = uniqueTableName('node');
		const ids: unknown[] = [7, 7.5, `'; DROP TABLE ${table}; --`, 'ünï©ødé', 'x'.repeat(10_000)];
		const items = ids.map((id) => ({ json: { headers: {}, body: { id } } }));
		const [created] = await run(items, { options: { table } });
		expect(keysOf(created)).toEqual([
			'evt:7',
			'evt:7.5',
			`evt:'; DROP TABLE ${table}; --`,
			'evt:ünï©ødé',
			expect.stringMatching(/^evt-sha256:[0-9a-f]{64}$/),
		]);
		expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(5);
	});

	it('with a payload fingerprint, a different body under a known key leaves on the third output, Mismatch', async () => {
		const params = {
			options: { table: uniqueTableName('node'), payloadFingerprint: 'canonicalJson' },
		};
		const first = await run([webhookItem('{"id":"evt_M","amount":5}')], params);
		expect(first.map((o) => o.length)).toEqual([1, 0, 0]);
		const reordered = await run([webhookItem('{ "amount": 5, "id": "evt_M" }')], params);
		expect(reordered.map((o) => o.length)).toEqual([0, 1, 0]);
		const changed = await run([webhookItem('{"id":"evt_M","amount":500}')], params);
		expect(changed.map((o) => o.length)).toEqual([0, 0, 1]);
		expect(changed[2][0].json.idempotency).toMatchObject({ mismatch: true, isNew: false });
	});

	it('with a lease, the result carries a claim id and repeats are in_progress', async () => {
		const params = {
			claimMode: 'lease',
			leaseSeconds: 120,
			options: { table: uniqueTableName('node') },
		};
		const [created] = await run([webhookItem('{"id":"evt_L"}')], params);
		const [, duplicate] = await run([webhookItem('{"id":"evt_L"}')], params);
		expect(created[0].json.idempotency).toMatchObject({
			isNew: true,
			status: 'processing',
			claimId: expect.any(String),
		});
		expect(duplicate[0].json.idempotency).toMatchObject({
			isNew: false,
			duplicateKind: 'in_progress',
			claimId: null,
		});
	});

	it('with Count Repeat Deliveries off, a repeat is read-only: the row is not rewritten', async () => {
		const table = uniqueTableName('node');
		const params = { options: { table, countRepeats: false } };
		await run([webhookItem('{"id":"evt_R"}')], params);
		// A compact row leaves deliveries NULL until a repeat is counted: NULL means one delivery.
		const rowVersion = `SELECT xmin::text, COALESCE(deliveries, 1) AS deliveries FROM ${table}`;
		const before = await admin.query(rowVersion);
		const [, duplicate] = await run([webhookItem('{"id":"evt_R"}')], params);
		const after = await admin.query(rowVersion);
		expect(duplicate[0].json.idempotency).toMatchObject({
			isNew: false,
			duplicateKind: 'completed',
			deliveries: null,
		});
		expect(after.rows).toEqual(before.rows);
		expect(after.rows[0].deliveries).toBe(1);
	});

	it('an execution with no items sends nothing and returns empty outputs', async () => {
		expect(await run([], { options: { table: 'never_created' } })).toEqual([[], []]);
	});

	it.each(['once', 'lease'])(
		'an id with a lone surrogate is claimed under its own hashed key and settles normally (%s)',
		async (claimMode) => {
			const table = uniqueTableName('surrogate');
			const params = { claimMode, options: { table } };
			const [[first]] = await run([webhookItem('{"id":"evt_\\ud800"}')], params);
			const [, [again]] = await run([webhookItem('{"id":"evt_\\ud800"}')], params);
			const [[other]] = await run([webhookItem('{"id":"evt_\\udfff"}')], params);
			const [firstKey, againKey, otherKey] = keysOf([first, again, other]);
			expect(firstKey).toMatch(/^evt-sha256:[0-9a-f]{64}$/);
			expect(againKey).toBe(firstKey);
			expect(otherKey).not.toBe(firstKey);
		},
	);

	it('under "Continue (regular output)" nothing unclaimed leaves on New: a failed item leaves on Duplicate, unclaimed and to be retried', async () => {
		// Throwing is no way out there: n8n would hand the node's input to its first output, New.
		const underRegularOutput = (
			items: INodeExecutionData[],
			credentials = testCredentials(),
			options: IDataObject = { table: uniqueTableName('regular') },
		) => run(items, { options }, { credentials, onError: 'continueRegularOutput' });
		const unclaimed = (item: INodeExecutionData, error: RegExp, errorKind: string) => ({
			json: {
				...item.json,
				error: errorKind,
				message: expect.stringMatching(error),
				idempotency: {
					key: null,
					isNew: false,
					status: 'unclaimed',
					duplicateKind: 'in_progress',
					claimId: null,
				},
			},
			binary: item.binary,
			pairedItem: { item: 0 },
		});

		const delivery = webhookItem('{"id":"evt_regular"}');
		const [downNew, downDuplicate] = await underRegularOutput(
			[delivery],
			testCredentials({ host: '127.0.0.1', port: 1 }),
		);
		expect(downNew).toEqual([]);
		expect(downDuplicate).toEqual([
			unclaimed(delivery, /^Connection refused at 127\.0\.0\.1:1/, 'database'),
		]);

		const empty = webhookItem('');
		const [emptyNew, emptyDuplicate] = await underRegularOutput([empty]);
		expect(emptyNew).toEqual([]);
		expect(emptyDuplicate).toEqual([unclaimed(empty, /^Item 0: no key/, 'bad_delivery')]);

		// A setting that fails before any key is made (n8n used to pass these items on to New).
		const [badNew, badDuplicate] = await underRegularOutput([delivery], testCredentials(), {
			table: 'bad-name!',
		});
		expect(badNew).toEqual([]);
		expect(badDuplicate).toEqual([unclaimed(delivery, /bad-name!/, 'configuration')]);
	});

	it('under "Continue (using error output)" a setting that fails before any key is made fails every item onto the error output, none onto New', async () => {
		const items = [webhookItem('{"id":"evt_a"}'), webhookItem('{"id":"evt_b"}')];
		const outputs = await run(
			items,
			{ claimMode: 'lease', leaseSeconds: 0, options: { table: uniqueTableName('erroroutput') } },
			{ onError: 'continueErrorOutput' },
		);
		// Error-only items on the first output are what n8n moves to the error output.
		expect(outputs).toEqual([
			[0, 1].map((index) => ({
				json: {
					error: 'configuration',
					message: expect.stringMatching(/^Lease \(Seconds\) must be/),
				},
				pairedItem: { item: index },
			})),
			[],
		]);
	});

	it('a busy pool and a statement timeout are reported as what they are, not as a connection time-out', async () => {
		const table = uniqueTableName('busy');
		const credentials = testCredentials({ maxConnections: 1 });
		const blocker = testPool(1);
		await run([webhookItem('{"id":"evt_warm"}')], { options: { table } }, { credentials });
		const holder = await blocker.connect();
		await holder.query('BEGIN');
		await holder.query(`INSERT INTO ${table} (key) VALUES ('evt:held')`);
		// The one pooled connection waits on the held row; the next claim cannot get a connection.
		const failureOf = (id: string, using = credentials) =>
			run([webhookItem(`{"id":"${id}"}`)], { options: { table } }, { credentials: using }).catch(
				(e: unknown) => e,
			);
		const waiting = failureOf('held');
		const busy = await failureOf('evt_other');
		expect((busy as Error).message).toMatch(
			/^All 1 pooled connections to 127\.0\.0\.1:\d+ stayed busy for 10 s/,
		);
		await holder.query('ROLLBACK');
		holder.release();
		await waiting;

		const timeoutRole = uniqueTableName('slow');
		await blocker.query(`CREATE ROLE ${timeoutRole} LOGIN PASSWORD 'slow-pw' SUPERUSER`);
		await blocker.query(`ALTER ROLE ${timeoutRole} SET statement_timeout = '200ms'`);
		const held = await blocker.connect();
		await held.query('BEGIN');
		await held.query(`INSERT INTO ${table} (key) VALUES ('evt:slow')`);
		const slow = await failureOf(
			'slow',
			testCredentials({ user: timeoutRole, password: 'slow-pw' }),
		);
		expect((slow as Error).message).toMatch(
			/cancelled the statement \(canceling statement due to statement timeout\): the database is up/,
		);
		await held.query('ROLLBACK');
		held.release();
		await blocker.end();
	}, 40_000);
});
