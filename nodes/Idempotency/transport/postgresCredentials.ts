import type { ConnectionOptions } from 'node:tls';
import type { PoolConfig } from 'pg';

import { caCertificatesFrom, clientIdentityFrom } from './tlsMaterial';
import { timestampParsingTypes } from './timestampParser';

/** How long a connection may take to open, and how long a claim may wait for a free pooled one. */
export const CONNECT_TIMEOUT_MS = 10_000;

export type SslMode = 'disable' | 'allow' | 'require';

/** The fields of the "Idempotency Postgres" credential, as n8n hands them to a node. */
export interface PostgresCredentials {
	host: string;
	port: number;
	database: string;
	user: string;
	password?: string;
	ssl?: SslMode;
	ignoreSslIssues?: boolean;
	/** PEM of the CA(s) the server's certificate must chain to; empty: the CAs Node.js trusts. */
	caCertificate?: string;
	/** PEM certificate and key, for servers that authenticate users by client certificate. */
	clientCertificate?: string;
	clientPrivateKey?: string;
	maxConnections?: number;
}

/**
 * pg settings for a credential. Whether `allow` uses TLS is decided by `connectsWithTls` (one trial
 * connection), so without that answer it starts without TLS.
 */
export function poolConfig(
	credentials: PostgresCredentials,
	useTls = credentials.ssl === 'require',
): PoolConfig {
	return {
		host: credentials.host,
		port: Number(credentials.port) || 5432,
		database: credentials.database,
		user: credentials.user,
		password: credentials.password || undefined,
		ssl: useTls ? tlsOptions(credentials) : false,
		max: Math.max(1, Number(credentials.maxConnections) || 10),
		connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
		// Idle connections close on their own; the pool object is dropped by the registry after longer idleness.
		idleTimeoutMillis: 30_000,
		allowExitOnIdle: true,
		application_name: 'n8n-nodes-idempotency',
		types: timestampParsingTypes(),
	};
}

/**
 * The server's certificate is verified, host name included, against the credential's CA or else the CAs
 * Node.js trusts, unless the user chose to ignore SSL issues. A client certificate is sent either way:
 * ignoring the server's certificate does not change how the server checks the user.
 */
function tlsOptions(credentials: PostgresCredentials): ConnectionOptions {
	const cert = credentials.clientCertificate?.trim() ?? '';
	const key = credentials.clientPrivateKey?.trim() ?? '';
	const options: ConnectionOptions = { rejectUnauthorized: !credentials.ignoreSslIssues };
	if (cert || key) Object.assign(options, clientIdentityFrom(cert, key));
	const ca = credentials.caCertificate?.trim();
	if (ca && !credentials.ignoreSslIssues) options.ca = caCertificatesFrom(ca);
	return options;
}

/** The settings that make two credentials "the same database as the same user with the same settings". */
export type ConnectionIdentity = readonly [
	host: string,
	port: number,
	database: string,
	user: string,
	password: string,
	ssl: SslMode,
	ignoreSslIssues: boolean,
	caCertificate: string,
	clientCertificate: string,
	clientPrivateKey: string,
	maxConnections: number,
];

export function connectionIdentity(credentials: PostgresCredentials): ConnectionIdentity {
	return [
		credentials.host,
		Number(credentials.port) || 5432,
		credentials.database,
		credentials.user,
		credentials.password ?? '',
		credentials.ssl ?? 'disable',
		Boolean(credentials.ignoreSslIssues),
		// A pool made without this CA must not serve a credential that names one, nor the other way round.
		credentials.caCertificate?.trim() ?? '',
		credentials.clientCertificate?.trim() ?? '',
		credentials.clientPrivateKey?.trim() ?? '',
		Number(credentials.maxConnections) || 10,
	];
}

/**
 * Whether a credential names the connection an identity was taken from. Field by field, so finding a
 * credential's pool on every execution serialises nothing (n8n hands each execution a fresh copy).
 */
export function sameConnection(
	identity: ConnectionIdentity,
	credentials: PostgresCredentials,
): boolean {
	const other = connectionIdentity(credentials);
	return identity.every((value, index) => value === other[index]);
}
