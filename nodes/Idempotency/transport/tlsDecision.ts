import { Client } from 'pg';

import { poolConfig, type PostgresCredentials } from './postgresCredentials';

/**
 * Whether connections for this credential use TLS. The pool and the credential's Test both ask here, so
 * Test reports what the node will do. `allow` is libpq's: plain TCP unless the server refuses it, which
 * costs one trial connection.
 */
export async function connectsWithTls(credentials: PostgresCredentials): Promise<boolean> {
	if (credentials.ssl === 'allow') return plainConnectionRefused(credentials);
	return credentials.ssl === 'require';
}

async function plainConnectionRefused(credentials: PostgresCredentials): Promise<boolean> {
	const client = new Client(poolConfig(credentials, false));
	try {
		await client.connect();
		return false;
	} catch (error) {
		return /ssl|encryption/i.test((error as Error).message);
	} finally {
		await client.end().catch(() => undefined);
	}
}
