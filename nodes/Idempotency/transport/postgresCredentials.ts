import type { PoolConfig } from 'pg';

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
	maxConnections?: number;
}

/**
 * pg settings for a credential. `allow` first tries plain TCP and falls back to TLS (libpq's meaning);
 * the pool registry makes that choice once per pool and passes it in as `useTls`.
 */
export function poolConfig(credentials: PostgresCredentials, useTls = credentials.ssl === 'require'): PoolConfig {
	return {
		host: credentials.host,
		port: Number(credentials.port) || 5432,
		database: credentials.database,
		user: credentials.user,
		password: credentials.password || undefined,
		ssl: useTls ? { rejectUnauthorized: !credentials.ignoreSslIssues } : false,
		max: Math.max(1, Number(credentials.maxConnections) || 10),
		connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
		// Idle connections close on their own; the pool object is dropped by the registry after longer idleness.
		idleTimeoutMillis: 30_000,
		allowExitOnIdle: true,
		application_name: 'n8n-nodes-idempotency',
		types: timestampParsingTypes(),
	};
}

/** A stable identity for "the same database as the same user with the same settings". */
export function credentialIdentity(credentials: PostgresCredentials): string {
	return JSON.stringify([
		credentials.host,
		Number(credentials.port) || 5432,
		credentials.database,
		credentials.user,
		credentials.password ?? '',
		credentials.ssl ?? 'disable',
		Boolean(credentials.ignoreSslIssues),
		Number(credentials.maxConnections) || 10,
	]);
}
