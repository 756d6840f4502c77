import type { PostgresServer } from './server';

export default async function globalTeardown(): Promise<void> {
	await (globalThis as { __testPostgres?: PostgresServer }).__testPostgres?.stop();
}
