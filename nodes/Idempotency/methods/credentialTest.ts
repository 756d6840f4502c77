import { Client } from 'pg';
import type { ICredentialsDecrypted, ICredentialTestFunctions, INodeCredentialTestResult } from 'n8n-workflow';

import { describeConnectionError } from '../transport/describeConnectionError';
import { poolConfig, type PostgresCredentials } from '../transport/postgresCredentials';

/** The credential's "Test" button: one real connection and a query, with a reason the user can act on. */
export async function idempotencyPostgresConnectionTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const credentials = credential.data as unknown as PostgresCredentials;
	const client = new Client(poolConfig(credentials));
	try {
		await client.connect();
		await client.query('SELECT 1');
		return { status: 'OK', message: 'Connection successful' };
	} catch (error) {
		return { status: 'Error', message: `${describeConnectionError(error, credentials)}: ${(error as Error).message}` };
	} finally {
		await client.end().catch(() => undefined);
	}
}
