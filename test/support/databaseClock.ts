/**
 * The database's clock, moved by a test instead of editing rows or waiting. The node's SQL reads time only
 * through unqualified now() (claimConditions' DB_NOW), never a worker's clock. Every connection this test
 * file opens finds now(), clock_timestamp(), statement_timestamp() and transaction_timestamp() in a schema
 * of this process ahead of pg_catalog (listed explicitly in search_path, else Postgres searches it first), each the server's own time plus a shift the test sets: the node's statements run unchanged.
 * Not covered, and not used by the node: CURRENT_TIMESTAMP and 'now'::timestamptz. A column default
 * `now()` of a table created on such a connection follows the moved clock too.
 *
 * Call `databaseClock()` at the top of a test file, before any pool connects: it sets PGOPTIONS, which pg
 * reads for every new connection (jest gives each test file its own process.env). The shift starts at
 * zero for each test.
 */
import { testPool } from './database';

export interface DatabaseClock {
	/** Moves the database's clock forward (or back, negative) by this many seconds. */
	advance(seconds: number): Promise<void>;
	/** Moves the clock just past the latest lease of `table` that ends: whatever is held or scheduled there is due. */
	passLeasesOf(table: string): Promise<void>;
}

const FUNCTIONS: Array<[name: string, volatility: string]> = [
	['now', 'STABLE'],
	['transaction_timestamp', 'STABLE'],
	['statement_timestamp', 'STABLE'],
	['clock_timestamp', 'VOLATILE'],
];

export function databaseClock(): DatabaseClock {
	const schema = `test_clock_${process.pid}`;
	// public first: what a test creates unqualified lands there, as it would without the clock.
	process.env.PGOPTIONS = `-c search_path=public,${schema},pg_catalog`;
	// Its own connection, so shifting never waits for a pool a test has filled.
	const admin = testPool(1);
	const shift = `${schema}.shift`;

	beforeAll(async () => {
		await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
		await admin.query(
			`CREATE TABLE IF NOT EXISTS ${shift} (one boolean PRIMARY KEY DEFAULT true CHECK (one), seconds float8 NOT NULL)`,
		);
		await admin.query(`INSERT INTO ${shift} (seconds) VALUES (0) ON CONFLICT (one) DO NOTHING`);
		for (const [name, volatility] of FUNCTIONS) {
			await admin.query(
				`CREATE OR REPLACE FUNCTION ${schema}.${name}() RETURNS timestamptz LANGUAGE sql ${volatility} ` +
					`AS $$ SELECT pg_catalog.${name}() + make_interval(secs => (SELECT seconds FROM ${shift})) $$`,
			);
		}
		// The check the whole approach rests on: an unqualified now() on a test connection is this one.
		const { rows } = await admin.query<{ ours: boolean }>(
			`SELECT to_regprocedure('${schema}.now()') = (SELECT 'now()'::regprocedure) AS ours`,
		);
		if (!rows[0].ours) throw new Error(`now() does not resolve to ${schema}.now()`);
	});
	afterEach(() => admin.query(`UPDATE ${shift} SET seconds = 0`));
	afterAll(async () => {
		await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
		await admin.end();
	});

	const advance = async (seconds: number) => {
		await admin.query(`UPDATE ${shift} SET seconds = seconds + $1`, [seconds]);
	};
	return {
		advance,
		passLeasesOf: async (table) => {
			const { rows } = await admin.query<{ seconds: number | null }>(
				`SELECT extract(epoch FROM max(lease_until) - now())::float8 AS seconds FROM ${table} ` +
					"WHERE lease_until <> 'infinity'",
			);
			await advance(Math.max(0, rows[0].seconds ?? 0) + 1);
		},
	};
}
