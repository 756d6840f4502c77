/** deleteInBatches: one DELETE … LIMIT sent again until a batch deletes fewer rows than its size. */
import { deleteInBatches } from '../../../nodes/Idempotency/store/statements/deleteInBatches';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { testCredentials, uniqueTableName } from '../../support/database';

async function tableOf(rows: number) {
	const pool = await poolFor(testCredentials());
	const name = uniqueTableName('batches');
	await pool.query(`CREATE TABLE ${name} (n integer PRIMARY KEY)`);
	await pool.query(`INSERT INTO ${name} SELECT generate_series(1, $1::int)`, [rows]);
	const count = async () =>
		(await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`)).rows[0].n;
	const sql = `DELETE FROM ${name} WHERE n IN (SELECT n FROM ${name} WHERE n > $1 ORDER BY n LIMIT $2)`;
	return { pool, count, sql };
}

describe('deleteInBatches', () => {
	it('deletes every matching row, a batch at a time, and says how many and in how many batches', async () => {
		const { pool, count, sql } = await tableOf(25);
		expect(await deleteInBatches(pool, sql, [0, 10], 10)).toEqual({ deleted: 25, batches: 3 });
		expect(await count()).toBe(0);
	});

	it('a last batch that finds nothing ends it when the rows are a multiple of the batch', async () => {
		const { pool, sql } = await tableOf(20);
		expect(await deleteInBatches(pool, sql, [0, 10], 10)).toEqual({ deleted: 20, batches: 3 });
	});

	it('leaves the rows its statement does not match, and with none to delete sends one batch', async () => {
		const { pool, count, sql } = await tableOf(15);
		expect(await deleteInBatches(pool, sql, [10, 4], 4)).toEqual({ deleted: 5, batches: 2 });
		expect(await count()).toBe(10);
		expect(await deleteInBatches(pool, sql, [10, 4], 4)).toEqual({ deleted: 0, batches: 1 });
	});
});
