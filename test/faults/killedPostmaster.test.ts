/**
 * Postgres is killed outright mid-storm (`kill -9` of the postmaster: no shutdown, crash recovery on the next
 * start): once restarted at once, as a supervisor does, and once left down for 10 s, longer than a claim
 * retries. Claims that cannot wait are refused with words that name the host; nothing is claimed that did not
 * run, and once the server is back every event is processed exactly once with no claim left held.
 */
import { faultServerForSuite } from '../../harness/faults/faultServer';
import { stormEveryEventOnce } from '../support/faultStorm';

const EVENTS = 300;
const suite = faultServerForSuite();

const stormWithKill = (table: string, downMs: number) =>
	stormEveryEventOnce(suite, {
		table,
		events: EVENTS,
		seed: 35,
		settled: false,
		fault: { afterEvents: EVENTS / 3, run: () => suite.server.kill(downMs) },
	});

it('kill -9 of the postmaster mid-storm, restarted at once: every event once, no claim left held', async () => {
	await stormWithKill('claims_killed', 0);
}, 60_000);

it('kill -9, down for 10 s: claims refused as connection refused at the host, then every event once', async () => {
	const report = await stormWithKill('claims_killed_long', 10_000);
	expect(Object.keys(report.errors.claim)).toContainEqual(
		expect.stringMatching(
			new RegExp(
				`^Connection refused at 127\\.0\\.0\\.1:${suite.server.port}\\. Is PostgreSQL running`,
			),
		),
	);
}, 60_000);
