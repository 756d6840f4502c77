/** summarizeTable on a real table: counts by state, repeats of the last day, the oldest key. */
import { summarizeTable } from '../../../nodes/Idempotency/store/claims/tableSummary';
import { createKeyAndFirstSeenTable } from '../../support/claimTableSql';
import { testPool, uniqueTableName } from '../../support/database';
import { freshClaimTable } from '../../support/testClaimTables';

const now = new Date('2026-03-01T00:00:00Z');
const at = (iso: string) => new Date(iso);

describe('summarizeTable', () => {
	it('counts keys by state, the keys repeated in the day before now, and names the oldest key', async () => {
		const table = await freshClaimTable();
		await table.claim(['old'], { now: at('2026-01-01T00:00:00Z') });
		await table.claim(['repeated'], { now: at('2026-02-28T12:00:00Z') });
		await table.claim(['repeated'], { now: at('2026-02-28T13:00:00Z') });
		await table.claim(['repeated-long-ago'], { now: at('2026-02-01T00:00:00Z') });
		await table.claim(['repeated-long-ago'], { now: at('2026-02-02T00:00:00Z') });
		await table.claim(['running'], { mode: 'lease', now });
		expect(await summarizeTable(table, { now })).toEqual({
			totalKeys: 4,
			keysByStatus: { completed: 3, processing: 1 },
			keysRepeatedLastDay: 1,
			oldestKey: 'old',
			oldestFirstSeen: at('2026-01-01T00:00:00Z'),
			now,
		});
	});

	it('an empty table: no keys, no oldest, and the database clock when none is given', async () => {
		const table = await freshClaimTable();
		const summary = await summarizeTable(table);
		expect(summary).toMatchObject({
			totalKeys: 0,
			keysByStatus: {},
			keysRepeatedLastDay: 0,
			oldestKey: null,
			oldestFirstSeen: null,
		});
		expect(Math.abs(summary.now.getTime() - Date.now())).toBeLessThan(60_000);
	});

	it('a table of key and first_seen only: every key is completed, repeats are not known', async () => {
		const admin = testPool(1);
		const name = await createKeyAndFirstSeenTable(admin, uniqueTableName('keyonly'));
		await admin.end();
		const table = await freshClaimTable(false, name);
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen) VALUES ('a', $1), ('b', $2)`,
			[at('2026-02-01T00:00:00Z'), at('2026-01-15T00:00:00Z')],
		);
		expect(await summarizeTable(table, { now })).toMatchObject({
			totalKeys: 2,
			keysByStatus: { completed: 2 },
			keysRepeatedLastDay: null,
			oldestKey: 'b',
		});
	});
});
