import type { IExecuteFunctions } from 'n8n-workflow';

import type { PostgresCredentials } from '../../transport/postgresCredentials';

const CREDENTIAL_TYPE = 'idempotencyPostgresApi';

export async function readCredentials(context: IExecuteFunctions): Promise<PostgresCredentials> {
	return (await context.getCredentials(CREDENTIAL_TYPE)) as unknown as PostgresCredentials;
}
