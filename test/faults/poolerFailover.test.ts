/**
 * The claim table behind PgBouncer (transaction mode, Debian's 1.18) while its primary fails over to a
 * streaming standby: the primary stops (a fast shutdown whose checkpoint takes a second), PgBouncer's next
 * server login is refused, and from then on it answers every query at once with 08P01 "server login has
 * been failing"; the standby is promoted and PgBouncer pointed at it and reloaded. Complete, Release and a
 * claim sent meanwhile are retried through those answers and settle on the new primary. PgBouncer tries a
 * server again server_login_retry after a failed login: 1 s here (15 s by default) to keep the tests short.
 */
import { createKeyAndFirstSeenTable, rowsOf } from '../support/claimTableSql';
import { testPool } from '../support/database';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { OwnPostgres } from '../../harness/postgres/server';
import {
	completeKeys,
	openTestClaimTable,
	releaseKeys,
	type TestClaimTable,
} from '../support/testClaimTables';
import { TransactionPooler } from '../../harness/postgres/transactionPooler';

const describeWithPooler =
	TransactionPooler.installed() || process.env.CI ? describe : describe.skip;

/** The primary of the moment: each failover hands over to a standby made for it. */
let primary: OwnPostgres;
const servers: OwnPostgres[] = [];
let pooler: TransactionPooler;
beforeAll(async () => {
	if (!TransactionPooler.installed() && !process.env.CI) return;
	primary = await OwnPostgres.start();
	servers.push(primary);
	pooler = await TransactionPooler.start(primary.url, 2, { server_login_retry: 1 });
}, 60_000);
afterAll(async () => {
	await pooler?.stop();
	for (const server of servers) await server.stop();
}, 60_000);

/** A claim table reached through the pooler, as the credential names it; made (or upgraded) unless `asIs`. */
function throughPooler(name: string, asIs = false): Promise<TestClaimTable> {
	return openTestClaimTable(
		name,
		{ createIfMissing: !asIs, privileges: [] },
		credentialsFromUrl(pooler.url(primary.url)),
	);
}

/**
 * Stops the primary; once PgBouncer refuses queries, starts `work` (its first attempt meets that refusal),
 * then promotes the standby and repoints PgBouncer at it, as a failover manager does.
 */
async function failOverDuring<T>(work: () => Promise<T>): Promise<T> {
	const standby = await primary.startStandby();
	servers.push(standby);
	const stopping = primary.stopSlowly(1_000);
	await pooler.untilLoginsFail(primary.url);
	const working = work();
	working.catch(() => undefined); // awaited below, after the failover
	await stopping;
	await standby.promote();
	pooler.repoint(standby.url);
	primary = standby;
	return working;
}

describeWithPooler('a failover behind PgBouncer', () => {
	it('Complete and Release wait through the pooler\'s "server login has been failing" and settle on the promoted standby', async () => {
		const claims = await throughPooler('claims_failover_settle');
		const [done, failed] = await claims.claim(['evt:done', 'evt:failed'], { mode: 'lease' });
		const [completed, released] = await failOverDuring(() =>
			Promise.all([
				completeKeys(claims, [{ key: 'evt:done', claimId: done.claimId }]),
				releaseKeys(claims, [{ key: 'evt:failed', claimId: failed.claimId }]),
			]),
		);
		expect(completed).toEqual([true]);
		expect(released).toEqual([true]);
		const onNewPrimary = testPool(1, primary.url);
		try {
			expect(await rowsOf(onNewPrimary, claims.ref.qualified)).toMatchObject([
				{ key: 'evt:done', status: 'completed' },
			]);
		} finally {
			await onNewPrimary.end();
		}
	}, 60_000);

	it('a claim sent meanwhile is retried within its 8 s; a refused attempt reached no server, so a key taken before is a plain duplicate', async () => {
		// Without claim_token (a table left as it was made) an attempt that may have committed cannot be told
		// from another delivery's claim: the claim would fail rather than call the key a duplicate.
		// A pool's end() returns before its client's socket closes: on a loaded machine the primary's shutdown
		// below can reach that client first (CI saw the pool's unheard 'error' fail the test).
		const direct = testPool(1, primary.url);
		const name = await createKeyAndFirstSeenTable(direct, 'claims_failover_key_only').finally(() =>
			direct.end(),
		);
		const claims = await throughPooler(name, true);
		const [first] = await claims.claim(['evt:taken']);
		expect(first.won).toBe(true);
		const [taken, fresh] = await failOverDuring(() => claims.claim(['evt:taken', 'evt:new']));
		expect(taken).toMatchObject({ won: false, duplicateKind: 'completed' });
		expect(fresh.won).toBe(true);
	}, 60_000);
});
