import type { IDataObject } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext } from '../../harness/node/executeContext';
import { createKeyAndFirstSeenTable } from '../support/claimTableSql';
import { testCredentials, testPool, uniqueTableName } from '../support/database';
import { databaseClock } from '../support/databaseClock';

const admin = testPool(1);
afterAll(() => admin.end());
const clock = databaseClock();

const keyNode = new IdempotencyKey();
const claimNode = new IdempotencyClaim();

function listStuck(table: string, parameters: IDataObject = {}) {
	return keyNode.execute.call(
		executeContext([{ json: {} }], {
			parameters: { operation: 'listStuck', options: { table }, ...parameters },
			credentials: testCredentials(),
			nodeName: 'List Stuck Claims',
			nodeType: 'idempotencyKey',
		}),
	);
}

/** A full claim table, as the claim node creates it, holding one row of each kind relative to the server's clock. */
async function tableWithEveryKind(): Promise<string> {
	const table = uniqueTableName('stuck');
	await admin.query(`CREATE TABLE ${table} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now(),
		last_seen timestamptz, deliveries integer NOT NULL DEFAULT 1, status text NOT NULL DEFAULT 'completed',
		lease_until timestamptz, claim_token text, fingerprint text)`);
	await admin.query(`INSERT INTO ${table} (key, first_seen, last_seen, deliveries, status, lease_until, claim_token) VALUES
		('evt:stuck', now() - interval '3 hours', now() - interval '2 hours', 4, 'processing', now() - interval '2 hours', 'a'),
		('evt:young', now() - interval '5 minutes', now() - interval '5 minutes', 1, 'processing', now() - interval '1 minute', 'b'),
		('evt:live', now() - interval '3 hours', now() - interval '3 hours', 1, 'processing', now() + interval '1 hour', 'c'),
		('evt:done', now() - interval '3 hours', now() - interval '1 hour', 2, 'completed', NULL, NULL),
		('evt:ancient', now() - interval '40 days', now() - interval '40 days', 1, 'completed', NULL, NULL)`);
	return table;
}

describe('Idempotency Key node: List Stuck Claims', () => {
	it('one item per stuck claim, with its key, first/last seen, deliveries and lease', async () => {
		const table = await tableWithEveryKind();
		const [items] = await listStuck(table, { stuckAfterMinutes: 60 });
		expect(items).toHaveLength(1);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect(items[0].json).toEqual({
			kind: 'stuck_claim',
			table: `public.${table}`,
			key: 'evt:stuck',
			firstSeen: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			lastSeen: expect.any(String),
			deliveries: 4,
			leaseUntil: expect.any(String),
		});
		const json = items[0].json as Record<string, string>;
		expect(Date.parse(json.lastSeen) - Date.parse(json.firstSeen)).toBe(3_600_000);
	});

	it('numbers typed as expressions are read; a threshold of 0 reports the young claim too', async () => {
		const table = await tableWithEveryKind();
		const [items] = await listStuck(table, { stuckAfterMinutes: '0', maxKeys: '10' });
		expect(items.map((item) => item.json.key)).toEqual(['evt:stuck', 'evt:young']);
	});

	it('with the summary on, one summary item comes first', async () => {
		const table = await tableWithEveryKind();
		const [items] = await listStuck(table, { includeSummary: true });
		expect(items.map((item) => item.json.kind)).toEqual(['summary', 'stuck_claim']);
		expect(items[0].json).toEqual({
			kind: 'summary',
			table: `public.${table}`,
			totalKeys: 5,
			keysByStatus: { processing: 3, completed: 2 },
			keysRepeatedLastDay: 2,
			oldestKey: 'evt:ancient',
			oldestFirstSeen: expect.any(String),
			stuckClaims: 1,
			leasesTracked: true,
			at: expect.any(String),
		});
	});

	it('the summary counts every stuck claim, not only the Max Keys listed (a table the claim node created)', async () => {
		const table = uniqueTableName('claimed');
		const claimIds = (ids: string[]) =>
			claimNode.execute.call(
				executeContext(
					ids.map((id) => ({ json: { id } })),
					{
						parameters: {
							keySource: 'field',
							fieldPath: 'id',
							claimMode: 'lease',
							leaseSeconds: 60,
							options: { table },
						},
						credentials: testCredentials(),
					},
				),
			);
		// Claimed two hours ago with a 60 s lease, as a claim whose execution died would be; one lease is live.
		await clock.advance(-2 * 3600);
		await claimIds(Array.from({ length: 8 }, (_, i) => `stuck-${i}`));
		await clock.advance(2 * 3600);
		await claimIds(['live']);
		const [items] = await listStuck(table, { maxKeys: 2, includeSummary: true });
		expect(items.map((item) => item.json.kind)).toEqual(['summary', 'stuck_claim', 'stuck_claim']);
		expect(items[0].json).toMatchObject({
			totalKeys: 9,
			keysByStatus: { processing: 9 },
			stuckClaims: 8,
		});
	});

	it('a table without lease columns: no stuck claims, and an item saying why', async () => {
		const table = await createKeyAndFirstSeenTable(admin, uniqueTableName('once'));
		await admin.query(`INSERT INTO ${table} (key) VALUES ('evt:1')`);
		const [items] = await listStuck(table, { stuckAfterMinutes: 0 });
		expect(items).toEqual([
			{
				json: {
					kind: 'no_lease_columns',
					table: `public.${table}`,
					message: expect.stringContaining('none can be stuck'),
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('bad numbers are refused, naming the field and the value', async () => {
		const table = await tableWithEveryKind();
		await expect(listStuck(table, { stuckAfterMinutes: 'an hour' })).rejects.toThrow(
			'First Seen More Than (Minutes) Ago must be a number from 0 to 52560000, got "an hour"',
		);
		await expect(listStuck(table, { maxKeys: 2.5 })).rejects.toThrow(
			'Max Keys must be a whole number from 1 to 100000, got 2.5',
		);
	});

	it('a missing table is a node error naming it', async () => {
		await expect(listStuck(uniqueTableName('missing'))).rejects.toThrow(/does not exist/);
	});
});
