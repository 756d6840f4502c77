import { CONNECT_TIMEOUT_MS, type PostgresCredentials } from './postgresCredentials';
import { TlsMaterialError } from '../errors';

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
	}
	const fault = describeServerFault(err?.code ?? '', message, where);
	if (fault) return fault;
	if (/timeout exceeded when trying to connect/i.test(message)) {
		const size = Math.max(1, Number(credentials.maxConnections) || 10);
		return (
			`All ${size} pooled connections to ${where} stayed busy for ${CONNECT_TIMEOUT_MS / 1000} s: the database is up but this n8n process ` +
			'has more claims in flight than its pool; raise "Maximum Number of Connections" or look for slow statements'
		);
	}
	if (/Connection terminated|Connection ended unexpectedly/i.test(message)) {
		return (
			`The connection to PostgreSQL at ${where} was cut (${message}): the server restarted, crashed or failed over, ` +
			'or something between (a pooler, a firewall) closed it'
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

/**
 * The faults of a running server an operator meets (read-only, full disk, a held lock, timeouts set on the
 * role, a crash or shutdown), each named with what to do. Postgres' own words stay in the sentence: they
 * name the file, the table or the setting.
 */
function describeServerFault(code: string, message: string, where: string): string | undefined {
	if (code === '25006') {
		return (
			`PostgreSQL at ${where} is read-only (${message}): it is a standby (after a failover the old primary can ` +
			'come back as one while a pooler, a DNS name or this credential still points at it) or ' +
			'default_transaction_read_only is on for its server, database or user. Point the credential at the ' +
			'primary, or turn default_transaction_read_only off; nothing was written'
		);
	}
	if (code === '53100' || /no space left on device|disk full/i.test(message)) {
		return (
			`PostgreSQL at ${where} is out of disk space (${message}): the disk that holds its data or its WAL is full, ` +
			'so writes fail (and the server stops if it cannot write WAL). Free space there: old WAL kept for a ' +
			'replication slot or a failing archive_command, logs, bloated tables; the statement was rolled back'
		);
	}
	if (code.startsWith('53')) {
		return `PostgreSQL at ${where} ran out of a resource (${message}): the statement was rolled back; look at the server's memory, disk and limits`;
	}
	if (code === '55P03') {
		return (
			`PostgreSQL at ${where} gave up waiting for a lock (${message}): another session holds a lock on the table ` +
			'(ALTER TABLE, VACUUM FULL, CLUSTER, REINDEX, LOCK TABLE, or a long transaction) for longer than ' +
			"this user's lock_timeout. Find it in pg_locks and pg_stat_activity; the statement was rolled back"
		);
	}
	if (code === '57014') {
		return /statement timeout/i.test(message)
			? `PostgreSQL at ${where} cancelled the statement (${message}): the database is up, but the statement ran longer than statement_timeout ` +
					'(set on the server, database or user: SHOW statement_timeout), often because it waited for a lock ' +
					'another session held; the statement was rolled back'
			: `PostgreSQL at ${where} cancelled the statement (${message}): the database is up, but someone cancelled it (pg_cancel_backend); the statement was rolled back`;
	}
	if (code === '25P03' || code === '57P05') {
		return (
			`PostgreSQL at ${where} closed the connection (${message}): idle_in_transaction_session_timeout or ` +
			"idle_session_timeout is shorter than this node's pool keeps connections (30 s idle); raise it for this user"
		);
	}
	if (code === '57P01') {
		return `PostgreSQL at ${where} ended the session (${message}): the server is shutting down or restarting, or an administrator ran pg_terminate_backend`;
	}
	if (code === '57P02') {
		return (
			`PostgreSQL at ${where} crashed and is restarting (${message}): a server process died or could not write ` +
			"its WAL (a full disk is a common cause); look at the server's log"
		);
	}
	if (code === '57P03') {
		return (
			`PostgreSQL at ${where} does not accept connections yet (${message}): it is starting, shutting down, or ` +
			'replaying WAL after a crash; it answers again once recovery ends'
		);
	}
	return undefined;
}
