import type { Pool } from 'pg';

import { ClaimError } from '../../../nodes/Idempotency/errors';
import {
	SETTLE_RETRY,
	withTransientRetry,
} from '../../../nodes/Idempotency/store/statements/transientErrors';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { answerDroppingProxyForSuite } from '../../../harness/proxy/answerDroppingProxy';
import { createKeyAndFirstSeenTable, rowsOf } from '../../support/claimTableSql';
import { freshClaimTable, withClaimHelper } from '../../support/testClaimTables';
import { testDatabaseUrl, testPool, uniqueTableName } from '../../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

/** The backends of one pool only, found by asking each of its connections: other tests' connections are left alone. */
async function backendsOf(pool: Pool): Promise<number[]> {
	const clients = await Promise.all(
		Array.from({ length: pool.totalCount || 1 }, () => pool.connect()),
	);
	const pids = await Promise.all(
		clients.map(
			async (client) =>
				(await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid,
		),
	);
	for (const client of clients) client.release();
	return pids;
}

describe('a killed connection does not fail or double a claim', () => {
	it('claims succeed after every backend of the pool is terminated, and keys stay single', async () => {
		const table = await freshClaimTable();
		await table.claim(['evt:warm-1', 'evt:warm-2']);
		for (let round = 0; round < 5; round++) {
			const pids = await backendsOf(table.pool);
			await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
			const [outcome] = await table.claim([`evt:after-kill-${round}`]);
			expect(outcome.won).toBe(true);
			const [again] = await table.claim([`evt:after-kill-${round}`]);
			expect(again.won).toBe(false);
		}
	});

	it('a claim whose backend is terminated mid-statement is retried on a new connection and wins once', async () => {
		const table = await freshClaimTable();
		const holder = await admin.connect();
		await holder.query('BEGIN');
		// An uncommitted insert of the same key makes our claim wait inside its statement.
		await holder.query(`INSERT INTO ${table.ref.qualified} (key) VALUES ('evt:blocked')`);
		const pending = table.claim(['evt:blocked']);
		let killed = 0;
		// Until the claim waits on the lock (a deadline: a busy machine can be slow to get there).
		for (const deadline = Date.now() + 15_000; killed === 0 && Date.now() < deadline;) {
			await new Promise((resolve) => setTimeout(resolve, 20));
			// Only the backend waiting on this test's own table (its name is unique) is terminated.
			const result = await admin.query(
				`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				 WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
				[table.ref.table],
			);
			killed = result.rowCount ?? 0;
		}
		expect(killed).toBe(1);
		await holder.query('ROLLBACK');
		holder.release();
		const [outcome] = await pending;
		expect(outcome.won).toBe(true);
		expect((await rowsOf(admin, table.ref.qualified)).map((row) => row.key)).toEqual([
			'evt:blocked',
		]);
	});
});

describe('a claim that committed but whose answer was lost', () => {
	const suite = answerDroppingProxyForSuite(testDatabaseUrl);
	const throughProxy = suite.credentials;

	it.each(['once', 'lease'] as const)(
		'is recognised as this delivery’s own win on a table with claim_token (%s)',
		async (mode) => {
			const table = await freshClaimTable(true, uniqueTableName('lost'));
			const viaProxy = { ...table, pool: await poolFor(throughProxy()) };
			const key = `evt:lost-${mode}-${uniqueTableName('')}`;
			suite.proxy().dropAnswerTo(key);
			const dropped = suite.proxy().dropped;
			const [outcome] = await withClaimHelper(viaProxy).claim([key], { mode });
			expect(suite.proxy().dropped).toBe(dropped + 1);
			expect(outcome).toMatchObject({ won: true, duplicateKind: null });
			expect(await rowsOf(admin, table.ref.qualified)).toMatchObject([{ key }]);
		},
	);

	it('fails the execution instead of calling it a duplicate on a key/first_seen table left as it is', async () => {
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('lostnotoken'));
		const table = await freshClaimTable(false, name);
		const viaProxy = { ...table, pool: await poolFor(throughProxy()) };
		const key = `evt:lost-${uniqueTableName('')}`;
		suite.proxy().dropAnswerTo(key);
		const claimed = withClaimHelper(viaProxy).claim([key, 'evt:also-new']);
		await expect(claimed).rejects.toThrow(ClaimError);
		await expect(claimed).rejects.toThrow(
			/cannot tell whether keys "evt:lost-.*", "evt:also-new" were claimed by this delivery's lost attempt/,
		);
		// What the lost attempt committed stays: without a claim_token nobody can tell whose it is (README says so).
		expect((await rowsOf(admin, `"public"."${name}"`)).map((row) => row.key)).toEqual([
			'evt:also-new',
			key,
		]);
	});
});

describe("PgBouncer's own answers (all SQLSTATE 08P01), told apart by message", () => {
	/** A statement whose first attempt meets the pooler's `message` and whose next one answers. */
	async function meetingOnce(message: string) {
		let attempts = 0;
		const answer = await withTransientRetry(
			admin,
			async (client) => {
				if (++attempts === 1) throw Object.assign(new Error(message), { code: '08P01' });
				return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0].one;
			},
			SETTLE_RETRY,
		);
		return { attempts, ...answer };
	}

	it.each([
		// Sent to no server: the attempt did nothing.
		['server login has been failing, try again later (server_login_retry)', 0],
		['pgbouncer cannot connect to server', 0],
		['query_wait_timeout', 0],
		['client_login_timeout (server down)', 0],
		// Cut off with its server connection: the attempt may have committed.
		['server conn crashed?', 1],
	])('"%s" means the server is away: retried (lost attempts: %d)', async (message, lost) => {
		expect(await meetingOnce(message)).toEqual({ attempts: 2, value: 1, lostAttempts: lost });
	});

	it.each(['no more connections allowed (max_client_conn)', 'unsupported startup parameter: x'])(
		'"%s" is not retried',
		async (message) => {
			await expect(meetingOnce(message)).rejects.toThrow(message);
		},
	);
});
