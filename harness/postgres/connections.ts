import { randomBytes } from 'node:crypto';
import { Client, Pool, type ClientConfig } from 'pg';

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

/** The Idempotency Postgres credential's fields for a postgres:// URL. */
export function credentialsFromUrl(
	databaseUrl: string,
	overrides: Partial<PostgresCredentials> = {},
): PostgresCredentials {
	const url = new URL(databaseUrl);
	return {
		host: url.hostname,
		port: Number(url.port || 5432),
		database: decodeURIComponent(url.pathname.slice(1)),
		user: decodeURIComponent(url.username || 'postgres'),
		password: decodeURIComponent(url.password),
		ssl: 'disable',
		maxConnections: 10,
		...overrides,
	};
}

export function testCredentials(overrides: Partial<PostgresCredentials> = {}): PostgresCredentials {
	return credentialsFromUrl(testDatabaseUrl(), overrides);
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

/** One connection for a few statements, closed afterwards. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
	const client = new Client({ connectionString: url });
	await client.connect();
	try {
		return await work(client);
	} finally {
		await client.end();
	}
}

/**
 * A connection to a server that is starting: attempts repeat every 100 ms while `starting()` holds, until
 * one succeeds or `timeoutMs` has passed (then the last attempt's error is thrown).
 */
export async function connectWhenReady(
	config: ClientConfig,
	{
		timeoutMs = 30_000,
		starting = () => true,
	}: { timeoutMs?: number; starting?: () => boolean } = {},
): Promise<Client> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const client = new Client(config);
		try {
			await client.connect();
			return client;
		} catch (error) {
			await client.end().catch(() => undefined);
			if (!starting() || Date.now() > deadline) throw error;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	}
}

/** A URL fit to print: the password replaced. */
export function redact(databaseUrl: string): string {
	const url = new URL(databaseUrl);
	if (url.password) url.password = '***';
	return url.toString();
}
