import type { PostgresServer } from '../../harness/postgres/server';

export default async function globalTeardown(): Promise<void> {
	await (globalThis as { __testPostgres?: PostgresServer }).__testPostgres?.stop();
}
