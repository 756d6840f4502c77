/**
 * A DBA holds a lock on the claim table during traffic (LOCK TABLE … ACCESS EXCLUSIVE, as ALTER TABLE and
 * VACUUM FULL take), with a low lock_timeout or statement_timeout set on the claims' user. Claims are
 * refused with words that name the lock (or the timeout) and the host, nothing is claimed that did not
 * run, and once the lock is gone every event is processed exactly once with no claim left held.
 */
import { Client } from 'pg';

import { faultServerForSuite } from '../../harness/faults/faultServer';
import { stormEveryEventOnce } from '../support/faultStorm';

const EVENTS = 200;
const suite = faultServerForSuite();

/** Runs the storm as `user` (made with `setting`) while a second session holds the table for `holdMs`. */
async function stormUnderLock(table: string, user: string, setting: string, holdMs: number) {
	await suite.admin.query(`CREATE ROLE ${user} LOGIN SUPERUSER`);
	await suite.admin.query(`ALTER ROLE ${user} SET ${setting}`);
	const report = await stormEveryEventOnce(suite, {
		user,
		table,
		events: EVENTS,
		seed: 34,
		fault: {
			afterEvents: EVENTS / 4,
			run: async () => {
				const dba = new Client({ connectionString: suite.server.url });
				await dba.connect();
				await dba.query('BEGIN');
				await dba.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
				await new Promise((resolve) => setTimeout(resolve, holdMs));
				await dba.query('COMMIT');
				await dba.end();
			},
		},
	});
	return Object.keys(report.errors.claim);
}

it('a lock held for 20 s with lock_timeout = 1s on the user: claims refused as a lock timeout, then every event once', async () => {
	const errors = await stormUnderLock(
		'claims_lock',
		'claims_lock_user',
		"lock_timeout = '1s'",
		20_000,
	);
	expect(errors).toContainEqual(
		expect.stringMatching(
			new RegExp(
				`^PostgreSQL at ${suite.where} gave up waiting for a lock \\(canceling statement due to lock timeout\\): another session holds a lock on the table`,
			),
		),
	);
}, 60_000);

it('the same lock for 5 s with statement_timeout = 500ms on the user: claims refused as a statement timeout', async () => {
	const errors = await stormUnderLock(
		'claims_timeout',
		'claims_timeout_user',
		"statement_timeout = '500ms'",
		5_000,
	);
	expect(errors).toContainEqual(
		expect.stringMatching(
			new RegExp(
				`^PostgreSQL at ${suite.where} cancelled the statement \\(canceling statement due to statement timeout\\): the database is up, but the statement ran longer than statement_timeout`,
			),
		),
	);
}, 60_000);
