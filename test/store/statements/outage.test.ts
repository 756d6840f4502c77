import { rowsOf } from '../../support/claimTableSql';
import { completeKeys, releaseKeys, openTestClaimTable } from '../../support/testClaimTables';
import { credentialsFromUrl } from '../../../harness/postgres/connections';
import { OwnPostgres } from '../../../harness/postgres/server';

let server: OwnPostgres;
beforeAll(async () => {
	server = await OwnPostgres.start();
}, 60_000);
afterAll(async () => {
	await server?.stop();
});

/** How long the server is away: a fast shutdown and start take seconds, as a restart or a failover does. */
const DOWN_MS = 5_000;

function table(name: string) {
	return openTestClaimTable(
		name,
		{ createIfMissing: true, privileges: [] },
		credentialsFromUrl(server.url),
	);
}

describe('a Postgres restart between the business step and Complete', () => {
	it('Complete waits for the server to come back and settles the claim: the work is not thrown away', async () => {
		const claims = await table('restart_complete');
		const [claimed] = await claims.claim(['evt:paid'], { mode: 'lease' });
		const restarting = server.restart(DOWN_MS);
		await new Promise((resolve) => setTimeout(resolve, 200)); // the server is going down
		const completing = completeKeys(claims, [{ key: 'evt:paid', claimId: claimed.claimId }]);
		await restarting;
		expect(await completing).toEqual([true]);
		expect(await rowsOf(claims.pool, claims.ref.qualified)).toMatchObject([
			{ key: 'evt:paid', status: 'completed' },
		]);
	}, 60_000);

	it('Release rides out the same outage, so a failed business step stays retryable', async () => {
		const claims = await table('restart_release');
		const [claimed] = await claims.claim(['evt:failed'], { mode: 'lease' });
		const restarting = server.restart(DOWN_MS);
		await new Promise((resolve) => setTimeout(resolve, 200));
		const releasing = releaseKeys(claims, [{ key: 'evt:failed', claimId: claimed.claimId }]);
		await restarting;
		expect(await releasing).toEqual([true]);
		const [retry] = await claims.claim(['evt:failed'], { mode: 'lease' });
		expect(retry.won).toBe(true);
	}, 60_000);
});
