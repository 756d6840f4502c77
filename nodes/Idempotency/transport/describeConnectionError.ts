import type { PostgresCredentials } from './postgresCredentials';

/** Turns pg and socket errors into a sentence a user can act on; the original text stays at the end. */
export function describeConnectionError(error: unknown, credentials: PostgresCredentials): string {
	const err = error as { code?: string; message?: string };
	const message = err?.message ?? String(error);
	const where = `${credentials.host}:${credentials.port}`;
	switch (err?.code) {
		case 'ECONNREFUSED':
			return `Connection refused at ${where}: is PostgreSQL running and listening there? (${message})`;
		case 'ENOTFOUND':
		case 'EAI_AGAIN':
			return `Host "${credentials.host}" could not be resolved (${message})`;
		case 'ETIMEDOUT':
			return `Connection to ${where} timed out (${message})`;
		case '28P01':
			return `Authentication failed for user "${credentials.user}": wrong password (${message})`;
		case '28000':
			return `Authentication failed for user "${credentials.user}": the server does not allow this user from here, or needs TLS (${message})`;
		case '3D000':
			return `Database "${credentials.database}" does not exist on ${where} (${message})`;
		case '42501':
			return `Permission denied for user "${credentials.user}" (${message})`;
	}
	if (/ssl|tls|certificate|self[- ]signed/i.test(message)) {
		return `TLS problem connecting to ${where}: ${message}. Check the SSL setting, or allow self-signed certificates if you trust this server.`;
	}
	if (/timeout/i.test(message)) return `Connection to ${where} timed out (${message})`;
	return `Could not use PostgreSQL at ${where}: ${message}`;
}
