/**
 * Complete With Write on the store's own function, on a real Postgres: the business write and the Complete
 * commit together or not at all, and only for the claim's holder, through a takeover, a cut connection and
 * a lost COMMIT answer.
 */
import { ClaimNotHeldError, WriteError } from '../../../nodes/Idempotency/errors';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import {
	completeWithWrite,
	type WriteRequest,
} from '../../../nodes/Idempotency/store/claims/completeWithWrite';
import { answerDroppingProxyForSuite } from '../../../harness/proxy/answerDroppingProxy';
import { rowsOf } from '../../support/claimTableSql';
import { databaseClock } from '../../support/databaseClock';
import { waitFor } from '../../support/waitFor';
import { testDatabaseUrl, testPool, uniqueTableName } from '../../support/database';
import {
	freshClaimTable,
	openTestClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';

const clock = databaseClock();
const admin = testPool(2);
afterAll(() => admin.end());

/** A claim table and a business table `orders` beside it, whose event_id is unique. */
async function tables(claims?: TestClaimTable) {
	const table = claims ?? (await freshClaimTable());
	const orders = uniqueTableName('orders');
	await admin.query(`CREATE TABLE ${orders} (event_id text PRIMARY KEY, amount integer NOT NULL)`);
	const insert = (key: string, claimId: string, amount = 10, extra = ''): WriteRequest => ({
		key,
		claimId,
		write: {
			text: `INSERT INTO ${orders} (event_id, amount) SELECT $1, $2${extra} RETURNING event_id, amount`,
			values: [key, amount],
		},
	});
	const orderRows = async () =>
		(await admin.query(`SELECT event_id, amount FROM ${orders} ORDER BY event_id`)).rows;
	return { table, orders, insert, orderRows };
}

async function leased(table: TestClaimTable, key: string): Promise<string> {
	const [outcome] = await table.claim([key], { mode: 'lease', leaseSeconds: 60 });
	expect(outcome.won).toBe(true);
	return outcome.claimId!;
}

const rowOf = async (table: TestClaimTable, key: string) =>
	(await rowsOf(admin, table.ref.qualified)).find((row) => row.key === key);

describe('completeWithWrite', () => {
	it("writes and completes the holder's claim in one go, returning the write's rows", async () => {
		const { table, insert, orderRows } = await tables();
		const claimId = await leased(table, 'evt_1');
		const written = await completeWithWrite(table, insert('evt_1', claimId, 42));
		expect(written).toEqual({
			claim: { state: 'completed', response: null },
			rowCount: 1,
			rows: [{ event_id: 'evt_1', amount: 42 }],
		});
		expect(await orderRows()).toEqual([{ event_id: 'evt_1', amount: 42 }]);
		expect(await rowOf(table, 'evt_1')).toMatchObject({
			status: 'completed',
			lease_until: null,
			claim_token: null,
		});
	});

	it('a failed write rolls the Complete back: nothing written, the claim still held and retryable', async () => {
		const { table, insert, orderRows } = await tables();
		const claimId = await leased(table, 'evt_1');
		const before = await rowOf(table, 'evt_1');
		const failing = insert('evt_1', claimId, 1, " WHERE $2::int / 0 = 1 OR 'x' = 'y'");
		await expect(completeWithWrite(table, failing)).rejects.toThrow(WriteError);
		await expect(completeWithWrite(table, failing)).rejects.toThrow(
			/the write failed: division by zero.*claim is still held/,
		);
		expect(await orderRows()).toEqual([]);
		expect(await rowOf(table, 'evt_1')).toEqual(before);
		// The same holder's next attempt, with a write that works, commits both.
		await completeWithWrite(table, insert('evt_1', claimId));
		expect(await orderRows()).toHaveLength(1);
	});

	it('a Query of two statements is refused, so a hidden COMMIT or ROLLBACK cannot split the write from the Complete', async () => {
		const { table, orders, orderRows } = await tables();
		const cases = [
			// Before the fix: reported completed, yet the ROLLBACK had undone the write and the Complete.
			`INSERT INTO ${orders} VALUES ('evt_1', 1); ROLLBACK`,
			// Before the fix: the COMMIT completed the claim, then the failed write was reported as rolled back.
			`SELECT 1; COMMIT; INSERT INTO ${orders} VALUES ('evt_1', 1 / 0)`,
			// Before the fix: written and completed, with no rowCount or rows to report.
			`INSERT INTO ${orders} VALUES ('evt_1', 1); DELETE FROM ${orders} WHERE event_id = 'other'`,
		];
		for (const text of cases) {
			const claimId = await leased(table, 'evt_1');
			const before = await rowOf(table, 'evt_1');
			await expect(
				completeWithWrite(table, { key: 'evt_1', claimId, write: { text, values: [] } }),
			).rejects.toThrow(
				new RegExp('the write failed: cannot insert multiple commands into a prepared statement'),
			);
			expect(await orderRows()).toEqual([]);
			expect(await rowOf(table, 'evt_1')).toEqual(before);
			await admin.query(`DELETE FROM ${table.ref.qualified} WHERE key = 'evt_1'`);
		}
	});

	it('a holder whose claim was taken over writes nothing and is told so; the new holder writes once', async () => {
		const { table, insert, orderRows } = await tables();
		const first = await leased(table, 'evt_1');
		await clock.advance(61);
		const second = await leased(table, 'evt_1');
		await expect(completeWithWrite(table, insert('evt_1', first))).rejects.toThrow(
			new ClaimNotHeldError(
				'the claim on key "evt_1" is no longer this execution\'s: another execution holds it now ' +
					'(its lease ended and a retry took it over). Nothing was written',
			),
		);
		expect(await orderRows()).toEqual([]);
		await completeWithWrite(table, insert('evt_1', second));
		// The old holder's second try finds the key completed: still nothing of its own is written.
		await expect(completeWithWrite(table, insert('evt_1', first, 99))).rejects.toThrow(
			/completed already/,
		);
		expect(await orderRows()).toEqual([{ event_id: 'evt_1', amount: 10 }]);
	});

	it('refuses a key with no claim and a stranger claim ID, writing nothing', async () => {
		const { table, insert, orderRows } = await tables();
		await leased(table, 'evt_1');
		await expect(completeWithWrite(table, insert('missing', newClaimId()))).rejects.toThrow(
			/has no claim/,
		);
		await expect(completeWithWrite(table, insert('evt_1', newClaimId()))).rejects.toThrow(
			ClaimNotHeldError,
		);
		expect(await orderRows()).toEqual([]);
	});

	it('a takeover racing a slow write waits for it and then finds the key completed', async () => {
		const { table, orders, insert, orderRows } = await tables();
		const holder = await leased(table, 'evt_1');
		await clock.advance(61);
		// The write sleeps inside the transaction, the claim row locked by its Complete.
		const writing = completeWithWrite(table, insert('evt_1', holder, 10, ' FROM pg_sleep(1)'));
		await waitForSleeper(orders);
		const [takeover] = await table.claim(['evt_1'], { mode: 'lease', leaseSeconds: 60 });
		await writing;
		expect(takeover).toMatchObject({ won: false, status: 'completed' });
		expect(await orderRows()).toHaveLength(1);
	});

	it('a connection cut in the middle of the write runs the whole transaction again: written once', async () => {
		const { table, orders, insert, orderRows } = await tables();
		const holder = await leased(table, 'evt_1');
		const writing = completeWithWrite(table, insert('evt_1', holder, 10, ' FROM pg_sleep(1)'));
		await waitForSleeper(orders);
		// Only the writer's connection: other suites on the server share the user (killing all of its
		// connections once cut another suite's held transaction in CI).
		const cut = await admin.query(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${SLEEPING_WRITE} AND pid <> pg_backend_pid()`,
			[orders],
		);
		expect(cut.rowCount).toBe(1);
		expect((await writing).claim.state).toBe('completed');
		expect(await orderRows()).toEqual([{ event_id: 'evt_1', amount: 10 }]);
		expect(await rowOf(table, 'evt_1')).toMatchObject({ status: 'completed' });
	});
});

describe('completeWithWrite whose COMMIT answer is lost', () => {
	const suite = answerDroppingProxyForSuite(testDatabaseUrl);

	it('reports the write committed (the row says so) and writes it once', async () => {
		const name = uniqueTableName('claims');
		const throughProxy = await openTestClaimTable(
			name,
			{ createIfMissing: true, privileges: [] },
			suite.credentials(),
		);
		const { table, insert, orderRows } = await tables(throughProxy);
		const holder = await leased(table, 'evt_1');
		const dropped = suite.proxy().dropped;
		suite.proxy().dropAnswerTo('COMMIT');
		const written = await completeWithWrite(table, insert('evt_1', holder));
		expect(suite.proxy().dropped).toBe(dropped + 1);
		// The rows were in the lost answer: only that it committed is known.
		expect(written).toEqual({
			claim: { state: 'completed', response: null },
			rowCount: null,
			rows: null,
		});
		expect(await orderRows()).toEqual([{ event_id: 'evt_1', amount: 10 }]);
	});
});

/** A test's write into its own orders table ($1: its unique name), sleeping in pg_sleep(1). */
const SLEEPING_WRITE = "state = 'active' AND query LIKE '%' || $1 || '%pg_sleep(1)%'";

/** Until the write into `orders` sleeps on the server. */
const waitForSleeper = (orders: string) =>
	waitFor(
		async () =>
			(
				await admin.query(
					`SELECT 1 FROM pg_stat_activity WHERE ${SLEEPING_WRITE} AND pid <> pg_backend_pid()`,
					[orders],
				)
			).rows.length > 0,
		10_000,
		'the write starting',
	);
