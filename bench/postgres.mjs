// The Postgres the benchmarks run against: DATABASE_URL or TEST_DATABASE_URL when set, otherwise a
// throwaway embedded server from scripts/embedded-postgres.mjs (it stops when our end of its stdin closes).
import { startEmbeddedPostgres } from '../scripts/n8n/postgres.mjs';

export async function startBenchPostgres(log) {
	const given = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL;
	if (given) {
		log(`using the Postgres at ${redact(given)} (DATABASE_URL/TEST_DATABASE_URL)`);
		return { url: given, embedded: false, stop: async () => {} };
	}
	log('starting embedded Postgres (scripts/embedded-postgres.mjs)…');
	return startEmbeddedPostgres();
}

/** The node's credential fields for a postgres:// URL. */
export function credentialsFromUrl(url, maxConnections = 10) {
	const parsed = new URL(url);
	return {
		host: parsed.hostname,
		port: Number(parsed.port || 5432),
		database: decodeURIComponent(parsed.pathname.slice(1)),
		user: decodeURIComponent(parsed.username),
		password: decodeURIComponent(parsed.password),
		ssl: 'disable',
		ignoreSslIssues: false,
		maxConnections,
	};
}

export function redact(url) {
	return url.replace(/:[^:@/]*@/, ':***@');
}
