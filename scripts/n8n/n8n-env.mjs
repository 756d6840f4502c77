// The environment every n8n process of one instance shares (server and CLI alike): offline, quiet,
// loopback only, a fixed encryption key so CLI imports and the server read the same credentials.
// Facts behind each setting: /work/shared/N8N_NOTES.md.

const INHERITED_BUT_NOT_WANTED = /^(N8N_|DB_|EXECUTIONS_|WEBHOOK_URL$|NODE_ENV$|NODE_OPTIONS$|JEST_|npm_)/;

export const ENCRYPTION_KEY = 'n8n-nodes-idempotency-local-test-key';

/**
 * @param {object} options
 * @param {string} options.userFolder     N8N_USER_FOLDER (n8n keeps its state in <userFolder>/.n8n)
 * @param {number} options.port           editor, REST API and webhooks
 * @param {number} options.brokerPort     task broker for the Code node's runner (default 5679 would clash)
 * @param {string} [options.databaseUrl]  postgres://… for n8n's own database; SQLite in the user folder when absent
 * @param {string} [options.databaseSchema] schema inside that database (must exist)
 * @param {Record<string,string>} [options.extra] last word on any variable
 */
export function n8nEnv({ userFolder, port, brokerPort, databaseUrl, databaseSchema, extra = {} }) {
	const env = {
		// Keep PATH/HOME/locale from the caller, but nothing n8n-specific, and not the NODE_ENV=test and
		// npm_* that jest and npm set: under NODE_ENV=test n8n exits silently at boot.
		...Object.fromEntries(Object.entries(process.env).filter(([name]) => !INHERITED_BUT_NOT_WANTED.test(name))),
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}/`,
		N8N_WEBHOOK_URL: `http://127.0.0.1:${port}/`,
		N8N_SECURE_COOKIE: 'false', // plain http on loopback
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// Offline: nothing may call home or the template/AI services.
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		N8N_DISABLED_MODULES: 'mcp-registry',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		// The built-in template's Code node hashes raw bytes with node:crypto.
		NODE_FUNCTION_ALLOW_BUILTIN: 'crypto',
		N8N_LOG_LEVEL: process.env.N8N_LOG_LEVEL || 'info',
	};
	if (databaseUrl) Object.assign(env, postgresEnv(databaseUrl, databaseSchema));
	return { ...env, ...extra };
}

function postgresEnv(databaseUrl, schema) {
	const url = new URL(databaseUrl);
	return {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: url.hostname,
		DB_POSTGRESDB_PORT: url.port || '5432',
		DB_POSTGRESDB_DATABASE: decodeURIComponent(url.pathname.replace(/^\//, '')),
		DB_POSTGRESDB_USER: decodeURIComponent(url.username || 'postgres'),
		DB_POSTGRESDB_PASSWORD: decodeURIComponent(url.password || ''),
		...(schema ? { DB_POSTGRESDB_SCHEMA: schema } : {}),
	};
}
