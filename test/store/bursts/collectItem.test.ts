/**
 * Collecting items into bursts on a real Postgres. Times are an hour (nothing ends by itself during the
 * test) or zero (over by the next statement's clock): no test waits for time to pass.
 */
import { Pool } from 'pg';

import { burstTables, withBurstTables } from '../../../nodes/Idempotency/store/bursts/burstTables';
import { collectItem } from '../../../nodes/Idempotency/store/bursts/collectItem';
import { openClaimTable } from '../../../nodes/Idempotency/store/table/claimTable';
import { tableRef } from '../../../nodes/Idempotency/store/table/tableRef';
import { testDatabaseUrl, testPool, uniqueTableName } from '../../support/database';
import { burstRow, freshBurstTables, HOUR_RULES } from '../../support/freshBurstTables';

const pool = testPool(6);
afterAll(() => pool.end());

describe('collecting an item', () => {
	it('trailing: the first item holds the burst, later ones join it in order, under any claim ID', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const first = await collect('chat', { n: 0 }, 'holder-1');
		const second = await collect('chat', { n: 1 }, 'other-2');
		const third = await collect('chat', { n: 2 }, 'holder-1');
		expect(first).toMatchObject({ role: 'holder', seq: 1, filled: false });
		expect(second).toMatchObject({ role: 'joined', seq: 2, burstId: first.burstId });
		expect(third).toMatchObject({ role: 'joined', seq: 3, burstId: first.burstId });
		expect(third.arrivedAt.getTime()).toBeGreaterThanOrEqual(first.arrivedAt.getTime());
		expect(await burstRow(pool, tables, first.burstId)).toMatchObject({
			state: 'open',
			holder: 'holder-1',
			item_count: 3,
		});
		const other = await collect('another chat', { n: 0 }, 'holder-3');
		expect(other).toMatchObject({ role: 'holder', seq: 1 });
		expect(other.burstId).not.toBe(first.burstId);
	});

	it('the item that reaches Max Items fills the burst; the next one ends it and starts another', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const first = await collect('chat', { n: 0 }, 'holder-1', { maxItems: 2 });
		const filling = await collect('chat', { n: 1 }, 'joiner-2', { maxItems: 2 });
		expect(filling).toMatchObject({ role: 'joined', seq: 2, filled: true });
		expect(await burstRow(pool, tables, first.burstId)).toMatchObject({
			state: 'open',
			item_count: 2,
		});
		const next = await collect('chat', { n: 2 }, 'holder-3', { maxItems: 2 });
		expect(next).toMatchObject({ role: 'holder', seq: 1, filled: false });
		expect(next.burstId).not.toBe(first.burstId);
		// Its holder has not taken it yet: it stays to be run, no longer open to items.
		expect(await burstRow(pool, tables, first.burstId)).toMatchObject({
			state: 'ended',
			item_count: 2,
		});
	});

	it('with Max Items 1 each item is a burst that ends as it lands', async () => {
		const { collect } = freshBurstTables(pool);
		const items = [];
		for (let n = 0; n < 3; n++)
			items.push(await collect('chat', { n }, `holder-${n}`, { maxItems: 1 }));
		expect(items.map(({ role, seq, filled }) => ({ role, seq, filled }))).toEqual(
			items.map(() => ({ role: 'holder', seq: 1, filled: true })),
		);
		expect(new Set(items.map((item) => item.burstId)).size).toBe(3);
	});

	it('an item that finds the quiet period over starts the next burst', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const first = await collect('chat', { n: 0 }, 'holder-1', { quietMs: 0 });
		const next = await collect('chat', { n: 1 }, 'holder-2', { quietMs: 0 });
		expect(next).toMatchObject({ role: 'holder', seq: 1 });
		expect(next.burstId).not.toBe(first.burstId);
		expect((await burstRow(pool, tables, first.burstId)).state).toBe('ended');
	});

	it('leading: an item that finds no open burst runs alone at once; the first to join the window behind it holds it', async () => {
		const { collect, tables } = freshBurstTables(pool);
		const leading = { edge: 'leading' as const };
		const alone = await collect('chat', { n: 0 }, 'leader-1', leading);
		expect(alone).toMatchObject({ role: 'leading', seq: 1, filled: false });
		expect(await burstRow(pool, tables, alone.burstId)).toMatchObject({
			state: 'running',
			holder: 'leader-1',
			item_count: 1,
		});
		const holder = await collect('chat', { n: 1 }, 'holder-2', leading);
		const joiner = await collect('chat', { n: 2 }, 'joiner-3', leading);
		expect(holder).toMatchObject({ role: 'holder', seq: 1 });
		expect(joiner).toMatchObject({ role: 'joined', seq: 2, burstId: holder.burstId });
		expect(await burstRow(pool, tables, holder.burstId)).toMatchObject({
			state: 'open',
			holder: 'holder-2',
		});
	});
});

describe('collecting an item once per Item ID', () => {
	async function withItemClaims() {
		const table = uniqueTableName('bursts');
		const ref = tableRef('public', table);
		const tables = burstTables(ref);
		const itemClaims = await openClaimTable(pool, ref, {
			createIfMissing: true,
			privileges: ['SELECT', 'INSERT'],
		});
		const collect = (key: string, itemKey: string, claimId: string, on = pool) =>
			withBurstTables(on, tables, true, () =>
				collectItem(
					on,
					tables,
					{ key, itemJson: JSON.stringify({ itemKey }), itemKey },
					claimId,
					HOUR_RULES,
					{ ...itemClaims, pool: on },
				),
			);
		const itemCount = async () =>
			(await pool.query(`SELECT count(*)::int AS n FROM ${tables.items}`)).rows[0].n as number;
		return { table, tables, collect, itemCount };
	}

	it('claims the ID with the claim statement: a repeat, even under the same claim ID, is a duplicate collected nowhere', async () => {
		const { table, collect, itemCount } = await withItemClaims();
		expect(await collect('chat', 'burst:a', 'holder-1')).toMatchObject({ role: 'holder', seq: 1 });
		expect(await collect('chat', 'burst:a', 'holder-1')).toMatchObject({ role: 'duplicate' });
		expect(await collect('chat', 'burst:a', 'other-2')).toMatchObject({ role: 'duplicate' });
		expect(await collect('chat', 'burst:b', 'other-2')).toMatchObject({ role: 'joined', seq: 2 });
		expect(await itemCount()).toBe(2);
		// Claim Once's rows: final (no lease), kept until Purge removes them.
		const { rows } = await pool.query(
			`SELECT key, first_seen IS NOT NULL AS seen, lease_until FROM ${table} ORDER BY key`,
		);
		expect(rows.map((row) => [row.key, row.seen, row.lease_until])).toEqual([
			['burst:a', true, null],
			['burst:b', true, null],
		]);
	});

	it('many collects of one ID at once, on separate pools: one collects it', async () => {
		const { collect, itemCount } = await withItemClaims();
		const pools = Array.from(
			{ length: 4 },
			() => new Pool({ connectionString: testDatabaseUrl(), max: 1 }),
		);
		try {
			const outcomes = await Promise.all(
				pools.map((own, i) => collect('chat', 'burst:same', `holder-${i}`, own)),
			);
			expect(outcomes.filter((outcome) => outcome.role === 'duplicate')).toHaveLength(3);
		} finally {
			await Promise.all(pools.map((own) => own.end()));
		}
		expect(await itemCount()).toBe(1);
	});

	it('an ID whose item could not be collected is not kept: the claim goes with the failed transaction', async () => {
		const { table, tables, collect, itemCount } = await withItemClaims();
		await collect('warm-up', 'burst:w', 'holder-0');
		await pool.query(`CREATE FUNCTION ${table}_fail() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'disk gone'; END $$`);
		await pool.query(
			`CREATE TRIGGER fail BEFORE INSERT ON ${tables.items} FOR EACH ROW EXECUTE FUNCTION ${table}_fail()`,
		);
		await expect(collect('chat', 'burst:x', 'holder-1')).rejects.toThrow('disk gone');
		await pool.query(`DROP FUNCTION ${table}_fail() CASCADE`);
		expect(await collect('chat', 'burst:x', 'holder-1')).toMatchObject({ role: 'holder' });
		expect(await itemCount()).toBe(2);
	});
});

describe('a collect that fails for a moment', () => {
	/** A trigger on the items table that counts its runs (a sequence: not rolled back) and fails the first. */
	async function failingFirst(failure: string) {
		const { table, tables, collect } = freshBurstTables(pool);
		await collect('warm-up', { n: 0 }, 'holder-0');
		await pool.query(`CREATE SEQUENCE ${table}_runs`);
		await pool.query(`CREATE FUNCTION ${table}_fail() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF nextval('${table}_runs') = 1 THEN ${failure}; END IF; RETURN NEW; END $$`);
		await pool.query(
			`CREATE TRIGGER fail BEFORE INSERT ON ${tables.items} FOR EACH ROW EXECUTE FUNCTION ${table}_fail()`,
		);
		const runs = async () =>
			Number((await pool.query(`SELECT last_value FROM ${table}_runs`)).rows[0].last_value);
		const items = async () =>
			(await pool.query(`SELECT count(*)::int AS n FROM ${tables.items} WHERE item->>'n' = '1'`))
				.rows[0].n as number;
		return { collect, runs, items };
	}

	it('is sent again when the server rolled it back (a serialization failure), and collected once', async () => {
		const { collect, runs, items } = await failingFirst(
			"RAISE EXCEPTION 'could not serialize' USING ERRCODE = '40001'",
		);
		expect(await collect('chat', { n: 1 }, 'holder-1')).toMatchObject({ role: 'holder' });
		expect(await runs()).toBe(2);
		expect(await items()).toBe(1);
	});

	it('is not sent again when it may have been applied (its connection ended under it): nothing tells a second collect from a new one', async () => {
		const { collect, runs, items } = await failingFirst(
			'PERFORM pg_terminate_backend(pg_backend_pid())',
		);
		await expect(collect('chat', { n: 1 }, 'holder-1')).rejects.toThrow();
		expect(await runs()).toBe(1);
		expect(await items()).toBe(0);
	});
});
