import { CONNECT_TIMEOUT_MS, type PostgresCredentials } from './postgresCredentials';

/**
 * Turns pg and socket errors into a sentence a user can act on. The driver's own text is left out on
 * purpose: n8n replaces a node error message that mentions a socket code (ECONNREFUSED …) with a generic
 * one, so callers show the original as the error's description instead.
 */
export function describeConnectionError(error: unknown, credentials: PostgresCredentials): string {
	const err = error as { code?: string; message?: string };
	const message = err?.message ?? String(error);
	const where = `${credentials.host}:${credentials.port}`;
	switch (err?.code) {
		case 'ECONNREFUSED':
			return `Connection refused at ${where}. Is PostgreSQL running and listening there?`;
		case 'ENOTFOUND':
		case 'EAI_AGAIN':
			return `Host "${credentials.host}" could not be resolved`;
		case 'ETIMEDOUT':
			return `Connection to ${where} timed out`;
		case '28P01':
			return `Authentication failed for user "${credentials.user}": wrong password`;
		case '28000':
			return `Authentication failed for user "${credentials.user}": the server does not allow this user from here, or needs TLS`;
		case '3D000':
			return `Database "${credentials.database}" does not exist on ${where}`;
		case '42501':
			return `Permission denied for user "${credentials.user}": ${message}`;
		case '57014':
			return `PostgreSQL at ${where} cancelled the statement (${message}): the database is up, but the statement ran longer than its statement_timeout or was cancelled`;
	}
	if (/timeout exceeded when trying to connect/i.test(message)) {
		const size = Math.max(1, Number(credentials.maxConnections) || 10);
		return (
			`All ${size} pooled connections to ${where} stayed busy for ${CONNECT_TIMEOUT_MS / 1000} s: the database is up but this n8n process ` +
			'has more claims in flight than its pool; raise "Maximum Number of Connections" or look for slow statements'
		);
	}
	if (/connection timeout/i.test(message)) return `Connecting to ${where} timed out after ${CONNECT_TIMEOUT_MS / 1000} s`;
	if (/ssl|tls|certificate|self[- ]signed/i.test(message)) {
		return `TLS problem connecting to ${where}: check the SSL setting, or ignore SSL issues if you trust this server's self-signed certificate`;
	}
	// Server-side errors (SQLSTATE codes) and this package's own errors already say what is wrong.
	return err?.code && /^[0-9A-Z]{5}$/.test(err.code) ? `PostgreSQL at ${where}: ${message}` : message;
}
