// The n8n credentials the bundled workflows expect, built from one postgres:// URL: n8n's own Postgres
// credential (for the example business step and the built-in template) and this package's credential (for
// the Idempotency nodes). Names match the templates, which reference credentials by name only, so n8n's
// importer links them (workflows are exported without credential ids).
export const POSTGRES_CREDENTIAL = { id: 'idemDevPostgres1', name: 'Postgres account', type: 'postgres' };
export const IDEMPOTENCY_CREDENTIAL = {
	id: 'idemDevIdempPg01',
	name: 'Idempotency Postgres account',
	type: 'idempotencyPostgresApi',
};

export function connectionFields(databaseUrl) {
	const url = new URL(databaseUrl);
	return {
		host: url.hostname,
		port: Number(url.port || 5432),
		database: decodeURIComponent(url.pathname.replace(/^\//, '')),
		user: decodeURIComponent(url.username || 'postgres'),
		password: decodeURIComponent(url.password || ''),
	};
}

/** Entries for `n8n import:credentials` (n8n encrypts `data` on import). */
export function credentialsFor(databaseUrl, { idempotency = true } = {}) {
	const connection = connectionFields(databaseUrl);
	const entries = [
		{
			...POSTGRES_CREDENTIAL,
			data: { ...connection, ssl: 'disable', allowUnauthorizedCerts: false, maxConnections: 20 },
		},
	];
	if (idempotency) {
		entries.push({ ...IDEMPOTENCY_CREDENTIAL, data: { ...connection, ssl: 'disable', maxConnections: 20 } });
	}
	return entries;
}
