/**
 * queryStatement: a statement prepared once per connection under its name, and a pool that shows a
 * pooler's symptom (a name already taken on the server connection) sending it unnamed from then on.
 */
import type { Pool, PoolClient } from 'pg';

import { queryStatement } from '../../../nodes/Idempotency/store/statements/namedStatements';
import { testPool, uniqueTableName } from '../../support/database';

const statement = (text: string) => ({ name: uniqueTableName('idem_test'), text });

/** A pool of one connection of the test's own (what it learns of poolers stays with it), and that connection. */
async function withOwnPool(run: (pool: Pool, client: PoolClient) => Promise<void>): Promise<void> {
	const pool = testPool(1);
	const client = await pool.connect();
	try {
		await run(pool, client);
	} finally {
		client.release();
		await pool.end();
	}
}

async function preparedNames(client: PoolClient) {
	const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
	return rows.map((row) => row.name);
}

describe('queryStatement', () => {
	it('answers the rows and leaves the statement prepared under its name on the connection', () =>
		withOwnPool(async (pool, client) => {
			const doubled = statement('SELECT $1::int * 2 AS n');
			const first = await queryStatement<{ n: number }>(pool, client, doubled, [21]);
			const second = await queryStatement<{ n: number }>(pool, client, doubled, [5]);
			expect([first.rows, second.rows]).toEqual([[{ n: 42 }], [{ n: 10 }]]);
			expect(await preparedNames(client)).toEqual([doubled.name]);
		}));

	it('where the name is taken on the server connection, runs it unnamed, and from then on sends every statement so', () =>
		withOwnPool(async (pool, client) => {
			const taken = statement('SELECT 1 AS n');
			// What a transaction pooler does: the server connection already holds a statement of this name.
			await client.query(`PREPARE ${taken.name} AS SELECT 'other' AS n`);
			const { rows } = await queryStatement(pool, client, taken, []);
			expect(rows).toEqual([{ n: 1 }]);
			const later = statement('SELECT 2 AS n');
			expect((await queryStatement(pool, client, later, [])).rows).toEqual([{ n: 2 }]);
			expect(await preparedNames(client)).toEqual([taken.name]);
		}));

	it("passes a statement's own failure on, and goes on naming statements", () =>
		withOwnPool(async (pool, client) => {
			const failing = statement('SELECT 1 / $1::int AS n');
			await expect(queryStatement(pool, client, failing, [0])).rejects.toMatchObject({
				code: '22012',
			});
			const fine = statement('SELECT 3 AS n');
			await queryStatement(pool, client, fine, []);
			expect(await preparedNames(client)).toContain(fine.name);
		}));
});
