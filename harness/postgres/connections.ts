import { Client, type ClientConfig } from 'pg';

/** The Idempotency Postgres credential's fields for a postgres:// URL, with its default settings. */
export function credentialsFromUrl(databaseUrl: string) {
	const url = new URL(databaseUrl);
	return {
		host: url.hostname,
		port: Number(url.port || 5432),
		database: decodeURIComponent(url.pathname.slice(1)),
		user: decodeURIComponent(url.username || 'postgres'),
		password: decodeURIComponent(url.password),
		ssl: 'disable' as const,
		maxConnections: 10,
	};
}

/** One connection for a few statements, closed afterwards. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
	const client = new Client({ connectionString: url });
	await client.connect();
	try {
		return await work(client);
	} finally {
		await client.end();
	}
}

/**
 * A connection to a server that is starting: attempts repeat every 100 ms while `starting()` holds, until
 * one succeeds or `timeoutMs` has passed (then the last attempt's error is thrown).
 */
export async function connectWhenReady(
	config: ClientConfig,
	{
		timeoutMs = 30_000,
		starting = () => true,
	}: { timeoutMs?: number; starting?: () => boolean } = {},
): Promise<Client> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const client = new Client(config);
		try {
			await client.connect();
			return client;
		} catch (error) {
			await client.end().catch(() => undefined);
			if (!starting() || Date.now() > deadline) throw error;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	}
}

/** A URL fit to print: the password replaced. */
export function redact(databaseUrl: string): string {
	const url = new URL(databaseUrl);
	if (url.password) url.password = '***';
	return url.toString();
}
