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
 * The credential's "Test" button: one real connection, made with the same TLS decision the node's pool
 * makes, and a reason the user can act on. A server that answers but cannot take a claim (a standby, a
 * read-only setting, a full disk) fails the test too: "Connection successful" would send the user away
 * with every claim about to fail.
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
		const refusal = await writeRefusal(client, credentials);
		if (refusal) return { status: 'Error', message: refusal };
		return { status: 'OK', message: 'Connection successful' };
	} catch (error) {
		const reason = describeConnectionError(error, credentials);
		const detail = (error as Error).message;
		return {
			status: 'Error',
			message: reason.includes(detail) ? reason : `${reason}: ${detail}`,
		};
	} finally {
		await client?.end().catch(() => undefined);
	}
}

/** Why this server would refuse a claim, or undefined when it takes writes. */
async function writeRefusal(
	client: Client,
	credentials: PostgresCredentials,
): Promise<string | undefined> {
	const { rows } = await client.query<{ standby: boolean; read_only: string; server: string }>(
		"SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS read_only, " +
			"coalesce(host(inet_server_addr()), 'local socket') AS server",
	);
	const { standby, read_only: readOnly, server } = rows[0];
	// Through a pooler or a DNS name, the server that answered is worth naming too.
	const where = `${credentials.host}:${credentials.port}${server === credentials.host ? '' : ` (server ${server})`}`;
	if (standby) {
		return (
			`PostgreSQL at ${where} is a standby (in recovery, read-only): no claim can be written there. After a ` +
			'failover the old primary can come back as a standby while a pooler, a DNS name or this credential ' +
			'still points at it; point Host at the primary'
		);
	}
	if (readOnly === 'on') {
		return (
			`PostgreSQL at ${where} is read-only: default_transaction_read_only is on for its server, database or ` +
			`user "${credentials.user}", so no claim can be written there; turn it off (ALTER ROLE … SET ` +
			'default_transaction_read_only = off) or point Host at a server that takes writes'
		);
	}
	return diskFull(client, credentials);
}

/**
 * Whether the disk under this database is full: one row in a temporary table extends a file there (Postgres
 * writes the new page at once) and is rolled back. A role without TEMP, or any other hitch, skips the check.
 */
async function diskFull(
	client: Client,
	credentials: PostgresCredentials,
): Promise<string | undefined> {
	try {
		await client.query('BEGIN');
		await client.query(
			'CREATE TEMP TABLE idempotency_write_check (b text) ON COMMIT DROP; INSERT INTO idempotency_write_check VALUES (NULL)',
		);
		return undefined;
	} catch (error) {
		const code = (error as { code?: string }).code ?? '';
		const message = (error as Error).message ?? '';
		if (code.startsWith('53') || /no space left on device/i.test(message))
			return describeConnectionError(error, credentials);
		return undefined;
	} finally {
		await client.query('ROLLBACK').catch(() => undefined);
	}
}
