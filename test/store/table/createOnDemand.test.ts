/** withTablesOnDemand: side tables made when a statement finds them missing, and only then. */
import { TableError } from '../../../nodes/Idempotency/errors';
import {
	UNDEFINED_TABLE,
	withTablesOnDemand,
	type TablesOnDemand,
} from '../../../nodes/Idempotency/store/table/createOnDemand';
import { poolFor } from '../../../nodes/Idempotency/transport/poolRegistry';
import { testCredentials, uniqueTableName } from '../../support/database';

function sideTable(): TablesOnDemand & { name: string } {
	const name = uniqueTableName('ondemand');
	return {
		name,
		missing: new Set([UNDEFINED_TABLE]),
		qualified: `"public"."${name}"`,
		ddl: [`CREATE TABLE IF NOT EXISTS "public"."${name}" (n integer)`],
		refusal: `${name} is missing and may not be created`,
	};
}

describe('withTablesOnDemand', () => {
	it('makes the missing table and runs the work again, which then finds it', async () => {
		const pool = await poolFor(testCredentials());
		const tables = sideTable();
		let runs = 0;
		const inserted = await withTablesOnDemand(pool, tables, true, async () => {
			runs++;
			return (await pool.query(`INSERT INTO ${tables.qualified} VALUES (1) RETURNING n`)).rows;
		});
		expect(inserted).toEqual([{ n: 1 }]);
		expect(runs).toBe(2);
	});

	it('runs the work once, with no DDL, when the table is there', async () => {
		const pool = await poolFor(testCredentials());
		const tables = sideTable();
		await pool.query(tables.ddl[0]);
		let runs = 0;
		await withTablesOnDemand(pool, { ...tables, ddl: ['SELECT 1/0'] }, true, async () => {
			runs++;
			return pool.query(`SELECT * FROM ${tables.qualified}`);
		});
		expect(runs).toBe(1);
	});

	it('without leave to create, refuses in the words given, and creates nothing', async () => {
		const pool = await poolFor(testCredentials());
		const tables = sideTable();
		const run = withTablesOnDemand(pool, tables, false, () =>
			pool.query(`SELECT * FROM ${tables.qualified}`),
		);
		await expect(run).rejects.toThrow(TableError);
		await expect(run).rejects.toThrow(tables.refusal);
		const { rows } = await pool.query('SELECT to_regclass($1) AS t', [tables.qualified]);
		expect(rows[0].t).toBeNull();
	});

	it('passes any other failure on as it is, without DDL or a second run', async () => {
		const pool = await poolFor(testCredentials());
		const tables = sideTable();
		let runs = 0;
		const run = withTablesOnDemand(pool, tables, true, async () => {
			runs++;
			return pool.query('SELECT 1/0');
		});
		await expect(run).rejects.toMatchObject({ code: '22012' });
		expect(runs).toBe(1);
		const { rows } = await pool.query('SELECT to_regclass($1) AS t', [tables.qualified]);
		expect(rows[0].t).toBeNull();
	});
});
