import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';

import { credentialsFromUrl } from '../../harness/postgres/connections';
import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';

/** The server globalSetup started (or TEST_DATABASE_URL). */
export function testDatabaseUrl(): string {
	const url = process.env.TEST_DATABASE_URL;
	if (!url) {
		throw new Error(
			'TEST_DATABASE_URL is not set: run the tests through jest (globalSetup starts Postgres)',
		);
	}
	return url;
}

/** The credential for the test server, with these settings changed. */
export function testCredentials(overrides: Partial<PostgresCredentials> = {}): PostgresCredentials {
	return { ...credentialsFromUrl(testDatabaseUrl()), ...overrides };
}

export function testPool(max = 10, url = testDatabaseUrl()): Pool {
	const pool = new Pool({ connectionString: url, max });
	// Tests kill backends on purpose; an idle client's error must not crash the test process.
	pool.on('error', () => undefined);
	return pool;
}

/** Each test gets its own table, so test files can run in parallel on one server. */
export function uniqueTableName(prefix = 't'): string {
	return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/**
 * A login role of the calling test's own, allowed to create tables in public: the server's count of its
 * connections is that test's alone, and killing them (pg_terminate_backend by usename) spares the suites
 * running beside it on the same database. `drop()` ends its connections and drops it with what it owns.
 */
export interface TestRole {
	name: string;
	/** The credential for the test server, logging in as this role, with these settings changed. */
	credentials(overrides?: Partial<PostgresCredentials>): PostgresCredentials;
	/** A pool of the test's own logging in as this role. */
	pool(max?: number): Pool;
	drop(): Promise<void>;
}

export async function createTestRole(admin: Pool, prefix: string): Promise<TestRole> {
	const name = uniqueTableName(prefix);
	const password = `${name}-password`;
	await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
	await admin.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${name}`);
	const url = new URL(testDatabaseUrl());
	url.username = name;
	url.password = password;
	return {
		name,
		credentials: (overrides = {}) => testCredentials({ user: name, password, ...overrides }),
		pool: (max = 10) => {
			const pool = new Pool({ connectionString: url.toString(), max });
			pool.on('error', () => undefined);
			return pool;
		},
		drop: async () => {
			await admin.query(
				'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1',
				[name],
			);
			await admin.query(`DROP OWNED BY ${name}`);
			await admin.query(`DROP ROLE ${name}`);
		},
	};
}
