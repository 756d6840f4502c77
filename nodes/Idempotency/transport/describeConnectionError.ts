import { CONNECT_TIMEOUT_MS, type PostgresCredentials } from './postgresCredentials';
import { TlsMaterialError } from './tlsMaterial';

/**
 * Turns pg and socket errors into a sentence a user can act on. The driver's own text is left out on
 * purpose: n8n replaces a node error message that mentions a socket code (ECONNREFUSED …) with a generic
 * one, so callers show the original as the error's description instead.
 */
export function describeConnectionError(error: unknown, credentials: PostgresCredentials): string {
	const err = error as { code?: string; message?: string };
	const message = err?.message ?? String(error);
	const where = `${credentials.host}:${credentials.port}`;
	if (error instanceof TlsMaterialError) return error.message;
	const tlsProblem = describeTlsProblem(err, message, credentials);
	if (tlsProblem) return `TLS problem connecting to ${where}: ${tlsProblem}`;
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
		case '53300':
			return (
				`PostgreSQL at ${where} has no connection slot left (${message}): every n8n process keeps its own pool of up to ` +
				`${Math.max(1, Number(credentials.maxConnections) || 10)} connections, and processes × pool size must stay below the server's max_connections; ` +
				'lower "Maximum Number of Connections" or raise max_connections'
			);
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
	if (/connection timeout/i.test(message))
		return `Connecting to ${where} timed out after ${CONNECT_TIMEOUT_MS / 1000} s`;
	if (/ssl|tls|certificate|self[- ]signed/i.test(message)) {
		return `TLS problem connecting to ${where}: check the SSL setting, or ignore SSL issues if you trust this server's self-signed certificate`;
	}
	// Server-side errors (SQLSTATE codes) and this package's own errors already say what is wrong.
	return err?.code && /^[0-9A-Z]{5}$/.test(err.code)
		? `PostgreSQL at ${where}: ${message}`
		: message;
}

/** Node's certificate checks that fail when no trusted CA signed the server's certificate. */
const UNTRUSTED_CERTIFICATE = new Set([
	'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
	'UNABLE_TO_GET_ISSUER_CERT',
	'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
	'SELF_SIGNED_CERT_IN_CHAIN',
	'DEPTH_ZERO_SELF_SIGNED_CERT',
	'CERT_SIGNATURE_FAILURE',
]);

/** What to change in the credential's SSL settings, for the TLS failures a user can fix there. */
function describeTlsProblem(
	err: { code?: string; message?: string } | undefined,
	message: string,
	credentials: PostgresCredentials,
): string | undefined {
	const code = err?.code ?? '';
	if (UNTRUSTED_CERTIFICATE.has(code)) {
		return credentials.caCertificate?.trim()
			? `the server's certificate is not signed by the CA Certificate in this credential`
			: `the server's certificate is not signed by a CA this machine trusts: paste the CA that signed it into CA Certificate, or turn on Ignore SSL Issues`;
	}
	if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
		return `the server's certificate is not issued for host "${credentials.host}": connect by a name the certificate lists, or turn on Ignore SSL Issues`;
	}
	if (code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired";
	if (code === 'CERT_NOT_YET_VALID')
		return "the server's certificate is not valid yet (check this machine's clock)";
	if (code === '28000' && /requires a valid client certificate/i.test(message)) {
		return `the server asks user "${credentials.user}" for a client certificate: fill in Client Certificate and Client Private Key`;
	}
	if (code === '28000' && /no encryption/i.test(message)) {
		return 'the server accepts only TLS connections from here: set SSL to Require or Allow';
	}
	if (/server does not support SSL/i.test(message)) {
		return 'the server does not accept TLS: set SSL to Allow or Disable';
	}
	return undefined;
}
