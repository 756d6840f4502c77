/**
 * The claim server's disk fills mid-storm (its data folder and WAL on a small filesystem of their own, filled
 * to the last byte), then space comes back. The business step writes to a server of its own, so events keep
 * arriving at the claim table while its disk is full. Claims are refused with words that name the full disk and the
 * host, the Test button says the same, nothing is claimed that did not run, and afterwards every event is
 * processed exactly once with no claim left held. Needs root (the small filesystem is a tmpfs).
 */
import { connectionTest } from '../../harness/node/executeContext';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { faultServerForSuite } from '../../harness/faults/faultServer';
import { stormEveryEventOnce } from '../support/faultStorm';

const EVENTS = 300;
const FULL_MS = 3_000;
const asRoot = process.getuid?.() === 0;
// The claims on a 96 MiB disk, the business step on a server of its own; mounting the disk needs root.
const claims = asRoot && faultServerForSuite({ diskMiB: 96 });
const business = asRoot && faultServerForSuite();

(asRoot ? it : it.skip)(
	'the disk fills mid-storm and is freed: claims refused as disk full, then every event once',
	async () => {
		if (!claims || !business) return;
		const credentials = credentialsFromUrl(claims.server.url);
		let testedDuringFault: { status: string; message: string } | undefined;
		const report = await stormEveryEventOnce(claims, {
			business,
			table: 'claims_disk',
			events: EVENTS,
			seed: 33,
			fault: {
				afterEvents: EVENTS / 3,
				run: async () => {
					claims.server.fillDisk();
					testedDuringFault = await connectionTest(credentials);
					await new Promise((resolve) => setTimeout(resolve, FULL_MS));
					claims.server.freeDisk();
				},
			},
		});
		const diskFull = new RegExp(
			`^PostgreSQL at ${claims.where} is out of disk space \\(could not extend file "[^"]+": No space left on device\\)`,
		);
		expect(Object.keys(report.errors.claim)).toContainEqual(expect.stringMatching(diskFull));
		expect(testedDuringFault).toEqual({
			status: 'Error',
			message: expect.stringMatching(diskFull),
		});
		expect(await connectionTest(credentials)).toEqual({
			status: 'OK',
			message: 'Connection successful',
		});
	},
	90_000,
);
