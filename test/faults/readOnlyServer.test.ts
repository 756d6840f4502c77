/**
 * The credential points at a read-only server: the primary comes back as a standby mid-storm (as an old
 * primary does after a failover, while a pooler or DNS still points at it), then is promoted; and a server
 * whose default_transaction_read_only is on. Claims are refused with words that name the fault and the
 * host, nothing is claimed that did not run, and after the fault every event is processed exactly once.
 */
import { rowsOf } from '../support/claimTableSql';
import { connectionTest } from '../../harness/node/executeContext';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { faultServerForSuite } from '../../harness/faults/faultServer';
import { runFaultStorm, stormEveryEventOnce } from '../support/faultStorm';
import { completeKeys, releaseKeys, openTestClaimTable } from '../support/testClaimTables';

const EVENTS = 300;
const STANDBY_MS = 3_000;
const suite = faultServerForSuite();

it('the server comes back as a standby mid-storm, then is promoted: claims refused as read-only, then every event once', async () => {
	const credentials = credentialsFromUrl(suite.server.url);
	let testedDuringFault: { status: string; message: string } | undefined;
	// Complete and Release wait for the promotion instead of leaving a claim held.
	const report = await stormEveryEventOnce(suite, {
		table: 'claims_standby',
		events: EVENTS,
		seed: 31,
		fault: {
			afterEvents: EVENTS / 3,
			run: async () => {
				await suite.server.restartAsStandby();
				testedDuringFault = await connectionTest(credentials);
				await new Promise((resolve) => setTimeout(resolve, STANDBY_MS));
				await suite.server.promote();
			},
		},
	});
	const claimErrors = Object.keys(report.errors.claim);
	expect(claimErrors.length).toBeGreaterThan(0);
	expect(claimErrors).toContainEqual(
		expect.stringMatching(
			new RegExp(
				`^PostgreSQL at ${suite.where} is read-only \\(cannot execute INSERT in a read-only transaction\\): it is a standby`,
			),
		),
	);
	expect(testedDuringFault).toEqual({
		status: 'Error',
		message: expect.stringMatching(
			new RegExp(`^PostgreSQL at ${suite.where} is a standby \\(in recovery, read-only\\)`),
		),
	});
	expect(await connectionTest(credentials)).toEqual({
		status: 'OK',
		message: 'Connection successful',
	});
}, 60_000);

it("default_transaction_read_only on the claims' user: the Test button and the claim both say so", async () => {
	await suite.admin.query('CREATE ROLE readonly_claims LOGIN SUPERUSER');
	await suite.admin.query('ALTER ROLE readonly_claims SET default_transaction_read_only = on');
	const credentials = { ...credentialsFromUrl(suite.server.url), user: 'readonly_claims' };
	const tested = await connectionTest(credentials);
	expect(tested).toEqual({
		status: 'Error',
		message: expect.stringMatching(
			new RegExp(
				`^PostgreSQL at ${suite.where} is read-only: default_transaction_read_only is on for its server, database or user "readonly_claims"`,
			),
		),
	});
	const report = await runFaultStorm({
		credentials,
		businessUrl: suite.server.url,
		table: 'claims_readonly_role',
		events: 1,
		seed: 32,
		settleMs: 1_000,
		fault: { afterEvents: 0, run: async () => undefined },
	});
	expect(Object.keys(report.errors.claim)).toContainEqual(
		expect.stringMatching(
			/is read-only \(cannot execute CREATE TABLE in a read-only transaction\)/,
		),
	);
	expect(report.undone).toHaveLength(1);
}, 30_000);

it('Complete and Release wait while the server is a standby, and settle once it is promoted', async () => {
	const claims = await openTestClaimTable(
		'claims_settle_standby',
		{ createIfMissing: true, privileges: [] },
		credentialsFromUrl(suite.server.url),
	);
	const [done, failed] = await claims.claim(['evt:done', 'evt:failed'], { mode: 'lease' });
	await suite.server.restartAsStandby();
	const completing = completeKeys(claims, [{ key: 'evt:done', claimId: done.claimId }]);
	const releasing = releaseKeys(claims, [{ key: 'evt:failed', claimId: failed.claimId }]);
	await new Promise((resolve) => setTimeout(resolve, 2_000));
	await suite.server.promote();
	expect(await completing).toEqual([true]);
	expect(await releasing).toEqual([true]);
	expect(await rowsOf(claims.pool, claims.ref.qualified)).toMatchObject([
		{ key: 'evt:done', status: 'completed' },
	]);
}, 30_000);
