import type { PostgresCredentials } from './postgresCredentials';

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
			return `Connection refused at ${where}: is PostgreSQL running and listening there?`;
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
	}
	if (/ssl|tls|certificate|self[- ]signed/i.test(message)) {
		return `TLS problem connecting to ${where}: check the SSL setting, or ignore SSL issues if you trust this server's self-signed certificate`;
	}
	if (/timeout/i.test(message)) return `Connection to ${where} timed out`;
	// Server-side errors (SQLSTATE codes) and this package's own errors already say what is wrong.
	return err?.code && /^[0-9A-Z]{5}$/.test(err.code) ? `PostgreSQL at ${where}: ${message}` : message;
}
