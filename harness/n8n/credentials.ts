// The n8n credentials the bundled workflows expect, built from one postgres:// URL: n8n's own Postgres
// credential (for the example business step and the built-in template), this package's credential
// (for the Idempotency nodes) and a signing secret (for the node template's Webhook Signature node). Names match the templates, which reference credentials by name only, so
// n8n's importer links them (workflows are exported without credential ids).
import { credentialsFromUrl } from '../postgres/connections';

export const POSTGRES_CREDENTIAL = {
	id: 'idemDevPostgres1',
	name: 'Postgres account',
	type: 'postgres',
};
export const IDEMPOTENCY_CREDENTIAL = {
	id: 'idemDevIdempPg01',
	name: 'Idempotency Postgres account',
	type: 'idempotencyPostgresApi',
};

export const SIGNING_CREDENTIAL = {
	id: 'idemDevSigning01',
	name: 'Webhook signing secret',
	type: 'idempotencyWebhookSigningApi',
};
/** The secret the node template's Webhook Signature node checks in dev and e2e runs (never a real one). */
export const TEMPLATE_SIGNING_SECRET = 'local-test-signing-secret';

export interface CredentialEntry {
	id: string;
	name: string;
	type: string;
	data: object;
}

/** Entries for `n8n import:credentials` (n8n encrypts `data` on import). */
export function templateCredentials(databaseUrl: string): CredentialEntry[] {
	const { host, port, database, user, password } = credentialsFromUrl(databaseUrl);
	const connection = { host, port, database, user, password, ssl: 'disable', maxConnections: 20 };
	return [
		{ ...POSTGRES_CREDENTIAL, data: { ...connection, allowUnauthorizedCerts: false } },
		{ ...IDEMPOTENCY_CREDENTIAL, data: connection },
		{ ...SIGNING_CREDENTIAL, data: { secret: TEMPLATE_SIGNING_SECRET } },
	];
}
