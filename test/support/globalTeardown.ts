import type { TestPostgres } from './postgres';

export default async function globalTeardown(): Promise<void> {
	await (globalThis as { __testPostgres?: TestPostgres }).__testPostgres?.stop();
}
