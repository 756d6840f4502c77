import { Pool } from 'pg';

import { createAppDatabase, type AppDatabase } from '../appDatabase';
import { withClient } from '../database';
import { startTestPostgres, type TestPostgres } from '../postgres';
import { REPO_ROOT, tablesSql, type WorkflowJson } from '../workflows';
import { templateCredentials, type CredentialEntry } from './credentials';
import { N8nExecutions } from './executions';
import { N8nInstance } from './instance';

/**
 * What most e2e suites start: a Postgres, an app database whose tables (workflows/processed_events.sql)
 * belong to the app role, as when a user runs that file, and a real n8n with this package, the
 * templates' credentials (plus any extra), the given workflows imported and published, and its own data
 * in a schema of the same database.
 */
export interface AppWithN8n {
	server: TestPostgres;
	app: AppDatabase;
	/** The app database as the server's admin: the test's checks. */
	pool: Pool;
	n8n: N8nInstance;
	executions: N8nExecutions;
	close(): Promise<void>;
}

export async function startAppWithN8n(options: {
	prefix: string;
	n8nSchema: string;
	workflows: WorkflowJson[];
	publish: string[];
	extraCredentials?: CredentialEntry[];
}): Promise<AppWithN8n> {
	const server = await startTestPostgres();
	const app = await createAppDatabase(server.url, options.prefix);
	await withClient(app.appUrl, (client) => client.query(tablesSql()));
	const pool = new Pool({ connectionString: app.adminUrl, max: 4 });
	await pool.query(`CREATE SCHEMA ${options.n8nSchema}`);
	const n8n = await N8nInstance.create({
		packageDir: REPO_ROOT,
		credentials: [...templateCredentials(app.appUrl), ...(options.extraCredentials ?? [])],
		workflows: options.workflows,
		publish: options.publish,
		databaseUrl: app.adminUrl,
		databaseSchema: options.n8nSchema,
	});
	await n8n.start();
	return {
		server,
		app,
		pool,
		n8n,
		executions: new N8nExecutions(pool, options.n8nSchema),
		close: async () => {
			await n8n.close();
			await pool.end();
			await app.drop();
			await server.stop();
		},
	};
}
