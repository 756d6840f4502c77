import { Client } from 'pg';
import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { describeConnectionError } from '../transport/describeConnectionError';
import { poolConfig, type PostgresCredentials } from '../transport/postgresCredentials';
import { connectsWithTls } from '../transport/tlsDecision';

/**
 * The credential's "Test" button: one real connection and a query, made with the same TLS decision the
 * node's pool makes, and a reason the user can act on.
 */
export async function idempotencyPostgresConnectionTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const credentials = credential.data as unknown as PostgresCredentials;
	let client: Client | undefined;
	try {
		client = new Client(poolConfig(credentials, await connectsWithTls(credentials)));
		await client.connect();
		await client.query('SELECT 1');
		return { status: 'OK', message: 'Connection successful' };
	} catch (error) {
		const reason = describeConnectionError(error, credentials);
		const detail = (error as Error).message;
		return { status: 'Error', message: detail === reason ? reason : `${reason}: ${detail}` };
	} finally {
		await client?.end().catch(() => undefined);
	}
}
