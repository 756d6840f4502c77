// The environment every n8n process of one instance shares (server and CLI alike): offline, quiet,
// loopback only, and a fixed encryption key so CLI imports and the server read the same credentials.
import { credentialsFromUrl } from '../postgres/connections';

const INHERITED_BUT_NOT_WANTED =
	/^(N8N_|DB_|EXECUTIONS_|WEBHOOK_URL$|NODE_ENV$|NODE_OPTIONS$|JEST_|npm_)/;

const ENCRYPTION_KEY = 'n8n-nodes-idempotency-local-test-key';

export interface N8nEnvOptions {
	/** N8N_USER_FOLDER (n8n keeps its state in <userFolder>/.n8n). */
	userFolder: string;
	/** Editor, REST API and webhooks. */
	port: number;
	/** Task broker for the Code node's runner (the default, 5679, would clash between instances). */
	brokerPort: number;
	/** postgres://… for n8n's own database; SQLite in the user folder when absent. */
	databaseUrl?: string;
	/** Schema inside that database (must exist). */
	databaseSchema?: string;
	/** n8n's major version (settings that one version knows and the other refuses). */
	n8nMajor: number;
	/** Last word on any variable. */
	extra?: Record<string, string>;
}

export function n8nEnv(options: N8nEnvOptions): NodeJS.ProcessEnv {
	const {
		userFolder,
		port,
		brokerPort,
		databaseUrl,
		databaseSchema,
		n8nMajor,
		extra = {},
	} = options;
	const env: NodeJS.ProcessEnv = {
		// Keep PATH/HOME/locale from the caller, but nothing n8n-specific, and not the NODE_ENV=test and
		// npm_* that jest and npm set: under NODE_ENV=test n8n exits silently at boot.
		...Object.fromEntries(
			Object.entries(process.env).filter(([name]) => !INHERITED_BUT_NOT_WANTED.test(name)),
		),
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
		// 2.x calls out at boot from this module; 1.x has no such module and refuses the unknown name.
		...(n8nMajor >= 2 ? { N8N_DISABLED_MODULES: 'mcp-registry' } : {}),
		// n8n 1.123's default expression engine ("vm") needs isolated-vm 6, which needs Node >= 22 and is
		// not built here; "legacy" is the engine n8n 1.x evaluated expressions with before it.
		...(n8nMajor < 2 ? { N8N_EXPRESSION_ENGINE: 'legacy' } : {}),
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		// The built-in template's Code node hashes raw bytes with node:crypto.
		NODE_FUNCTION_ALLOW_BUILTIN: 'crypto',
		N8N_LOG_LEVEL: process.env.N8N_LOG_LEVEL || 'info',
	};
	if (databaseUrl) {
		const { host, port: dbPort, database, user, password } = credentialsFromUrl(databaseUrl);
		Object.assign(env, {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: host,
			DB_POSTGRESDB_PORT: String(dbPort),
			DB_POSTGRESDB_DATABASE: database,
			DB_POSTGRESDB_USER: user,
			DB_POSTGRESDB_PASSWORD: password ?? '',
			...(databaseSchema ? { DB_POSTGRESDB_SCHEMA: databaseSchema } : {}),
		});
	}
	return { ...env, ...extra };
}
