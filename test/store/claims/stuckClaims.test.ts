import { listStuckClaims } from '../../../nodes/Idempotency/store/claims/stuckClaims';
import { summarizeTable } from '../../../nodes/Idempotency/store/claims/tableSummary';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { createKeyAndFirstSeenTable } from '../../support/claimTableSql';
import { freshClaimTable, originalLayoutClaimTable } from '../../support/testClaimTables';
import { testCredentials, uniqueTableName } from '../../support/database';

const now = new Date('2026-03-01T12:00:00Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

/**
 * Every kind of row a claim table of the original layout holds (a processing claim with no lease at all
 * among them), each first seen two hours before `now` unless said otherwise.
 */
async function tableWithEveryKind() {
	const table = await originalLayoutClaimTable();
	await table.pool.query(
		`INSERT INTO ${table.ref.qualified} (key, first_seen, last_seen, deliveries, status, lease_until, claim_token) VALUES
		 ('stuck:a', $1, $2, 3, 'processing', $3, 'tok-a'),
		 ('stuck:b', $4, $4, 1, 'processing', $3, 'tok-b'),
		 ('stuck:null-lease', $4, $4, 1, 'processing', NULL, 'tok-n'),
		 ('young', $5, $5, 1, 'processing', $6, 'tok-y'),
		 ('live', $1, $1, 1, 'processing', $7, 'tok-l'),
		 ('lease-ends-now', $1, $1, 1, 'processing', $8, 'tok-e'),
		 ('done', $1, $2, 2, 'completed', NULL, NULL),
		 ('done:ancient', $9, $9, 1, 'completed', NULL, NULL)`,
		[
			minutesAgo(180), // $1
			minutesAgo(30), // $2: a repeat within the last day
			minutesAgo(170), // $3: lease long over
			minutesAgo(120), // $4
			minutesAgo(10), // $5: too young to report
			minutesAgo(5), // $6
			new Date(now.getTime() + 60_000), // $7: still being worked on
			now, // $8: expires exactly now, as a takeover would see it
			new Date('2025-01-01T00:00:00Z'), // $9
		],
	);
	return table;
}

describe('stuck claims', () => {
	it('lists processing claims whose lease expired and whose key is older than the threshold, oldest first', async () => {
		const table = await tableWithEveryKind();
		const result = await listStuckClaims(table, { firstSeenMinutesAgo: 60, limit: 100, now });
		expect(result.leasesTracked).toBe(true);
		expect(result.now).toEqual(now);
		const claim = (
			key: string,
			[firstSeen, lastSeen]: [Date, Date],
			deliveries: number,
			leaseUntil: Date | null,
		) => ({ key, firstSeen, lastSeen, deliveries, leaseUntil });
		expect(result.claims).toEqual([
			claim('lease-ends-now', [minutesAgo(180), minutesAgo(180)], 1, now),
			claim('stuck:a', [minutesAgo(180), minutesAgo(30)], 3, minutesAgo(170)),
			claim('stuck:b', [minutesAgo(120), minutesAgo(120)], 1, minutesAgo(170)),
			claim('stuck:null-lease', [minutesAgo(120), minutesAgo(120)], 1, null),
		]);
	});

	it('a lower threshold reports the young claim once its lease is over; a live lease never', async () => {
		const table = await tableWithEveryKind();
		const keys = async (firstSeenMinutesAgo: number, at: Date) =>
			(await listStuckClaims(table, { firstSeenMinutesAgo, limit: 100, now: at })).claims.map(
				(claim) => claim.key,
			);
		expect(await keys(0, now)).toContain('young');
		expect(await keys(0, now)).not.toContain('live');
		// One minute later the live lease has expired too.
		expect(await keys(0, new Date(now.getTime() + 61_000))).toContain('live');
		expect(await keys(11, now)).not.toContain('young');
	});

	it('stops at the limit, keeping the oldest', async () => {
		const table = await tableWithEveryKind();
		const result = await listStuckClaims(table, { firstSeenMinutesAgo: 60, limit: 2, now });
		expect(result.claims.map((claim) => claim.key)).toEqual(['lease-ends-now', 'stuck:a']);
	});

	it('a table without lease columns has no stuck claims, and says so', async () => {
		const pool = await poolFor(testCredentials());
		const name = await createKeyAndFirstSeenTable(pool, uniqueTableName('claimonce'));
		await pool.query(`INSERT INTO ${name} (key, first_seen) VALUES ('a', $1), ('b', $2)`, [
			minutesAgo(500),
			minutesAgo(100),
		]);
		const table = await freshClaimTable(false, name);
		expect(await listStuckClaims(table, { firstSeenMinutesAgo: 0, limit: 10, now })).toEqual({
			leasesTracked: false,
			claims: [],
			now,
		});
		expect(await summarizeTable(table, { now })).toEqual({
			totalKeys: 2,
			keysByStatus: { completed: 2 },
			keysRepeatedLastDay: null,
			oldestKey: 'a',
			oldestFirstSeen: minutesAgo(500),
			now,
		});
	});
});

describe('table summary', () => {
	it('counts keys by status, repeats in the last day, and names the oldest key', async () => {
		const table = await tableWithEveryKind();
		expect(await summarizeTable(table, { now })).toEqual({
			totalKeys: 8,
			keysByStatus: { processing: 6, completed: 2 },
			// stuck:a and done: delivered more than once, last 30 minutes ago.
			keysRepeatedLastDay: 2,
			oldestKey: 'done:ancient',
			oldestFirstSeen: new Date('2025-01-01T00:00:00Z'),
			now,
		});
		// Two days later those repeats are out of the window.
		const later = await summarizeTable(table, { now: new Date(now.getTime() + 2 * 86_400_000) });
		expect(later.keysRepeatedLastDay).toBe(0);
	});

	it('an empty table', async () => {
		const table = await freshClaimTable();
		expect(await summarizeTable(table, { now })).toEqual({
			totalKeys: 0,
			keysByStatus: {},
			keysRepeatedLastDay: 0,
			oldestKey: null,
			oldestFirstSeen: null,
			now,
		});
	});
});
