import { startTestPostgres } from './server';

/** One server for the whole run; workers inherit TEST_DATABASE_URL and each test uses its own tables. */
export default async function globalSetup(): Promise<void> {
	const server = await startTestPostgres();
	process.env.TEST_DATABASE_URL = server.url;
	(globalThis as { __testPostgres?: typeof server }).__testPostgres = server;
}
