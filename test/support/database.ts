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

export function testPool(max = 10): Pool {
	const pool = new Pool({ connectionString: testDatabaseUrl(), max });
	// Tests kill backends on purpose; an idle client's error must not crash the test process.
	pool.on('error', () => undefined);
	return pool;
}

/** Each test gets its own table, so test files can run in parallel on one server. */
export function uniqueTableName(prefix = 't'): string {
	return `${prefix}_${randomBytes(5).toString('hex')}`;
}
