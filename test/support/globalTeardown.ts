import type { TestPostgres } from '../../harness/postgres/server';

export default async function globalTeardown(): Promise<void> {
	await (globalThis as { __testPostgres?: TestPostgres }).__testPostgres?.stop();
}
