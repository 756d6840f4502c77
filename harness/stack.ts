import { Pool } from 'pg';

import { createAppDatabase, type AppDatabase } from './postgres/appDatabase';
import { withClient } from './postgres/connections';
import { startPostgres, startTestPostgres, type TestPostgres } from './postgres/server';
import { REPO_ROOT, tablesSql, type WorkflowJson } from './n8n/workflows';
import { templateCredentials, type CredentialEntry } from './n8n/credentials';
import { N8nExecutions } from './n8n/executions';
import { N8nInstance, type N8nInstanceOptions } from './n8n/instance';
import type { Log } from './n8n/runtime';

/** What a suite drives: one n8n instance, or a queue-mode cluster. */
export interface N8nRunner {
	start(): Promise<void>;
	close(): Promise<void>;
	webhookUrl(path: string): string;
}

/**
 * What the e2e suites start: a Postgres, an app database whose tables (workflows/processed_events.sql)
 * belong to the app role, as when a user runs that file, and a real n8n with this package, the
 * templates' credentials (plus any extra), the given workflows imported and published, and its own data
 * in a schema of the same database.
 */
export interface AppWithN8n<Runner extends N8nRunner = N8nInstance> {
	server: TestPostgres;
	app: AppDatabase;
	/** The app database as its server's admin: the test's checks. */
	pool: Pool;
	n8n: Runner;
	executions: N8nExecutions;
	close(): Promise<void>;
}

export interface AppWithN8nOptions<Runner extends N8nRunner> {
	prefix: string;
	n8nSchema: string;
	workflows: WorkflowJson[];
	publish: string[];
	extraCredentials?: CredentialEntry[];
	/** Run as the app role after the tables: a suite's own tables and triggers. */
	appSql?: string;
	/**
	 * A server of the suite's own for the app database (one it restarts); n8n's data then lives in a
	 * database of its own on the test server, so the restart does not take n8n down with it.
	 */
	appServerUrl?: string;
	/** A server to use instead of the test server (startTestPostgres); it is left running on close. */
	serverUrl?: string;
	/** More environment for n8n (e.g. the owner account to sign in with), and where its progress goes. */
	env?: Record<string, string>;
	log?: Log;
	/** How n8n runs (default one instance), given the package, credentials, workflows and database. */
	launch?: (options: N8nInstanceOptions & { databaseUrl: string }) => Promise<Runner>;
}

export async function startAppWithN8n<Runner extends N8nRunner = N8nInstance>(
	options: AppWithN8nOptions<Runner>,
): Promise<AppWithN8n<Runner>> {
	const server = options.serverUrl
		? await startPostgres(options.serverUrl)
		: await startTestPostgres();
	const app = await createAppDatabase(options.appServerUrl ?? server.url, options.prefix);
	await withClient(app.appUrl, (client) => client.query(`${tablesSql()}\n${options.appSql ?? ''}`));
	const pool = new Pool({ connectionString: app.adminUrl, max: 4 });
	const n8nHome = options.appServerUrl
		? await createAppDatabase(server.url, `${options.prefix}_n8n`)
		: app;
	const n8nPool = n8nHome === app ? pool : new Pool({ connectionString: n8nHome.adminUrl, max: 2 });
	await n8nPool.query(`CREATE SCHEMA ${options.n8nSchema}`);
	const launch =
		options.launch ?? ((instance) => N8nInstance.create(instance) as Promise<N8nRunner>);
	let n8n: Runner | undefined;
	const close = async () => {
		await n8n?.close();
		await pool.end();
		if (n8nHome !== app) {
			await n8nPool.end();
			await n8nHome.drop();
		}
		await app.drop();
		await server.stop();
	};
	try {
		n8n = (await launch({
			packageDir: REPO_ROOT,
			credentials: [...templateCredentials(app.appUrl), ...(options.extraCredentials ?? [])],
			workflows: options.workflows,
			publish: options.publish,
			databaseUrl: n8nHome.adminUrl,
			databaseSchema: options.n8nSchema,
			env: options.env,
			log: options.log,
		})) as Runner;
		await n8n.start();
	} catch (error) {
		// A failed start leaves no user folder, app database or server behind.
		await close().catch(() => undefined);
		throw error;
	}
	return {
		server,
		app,
		pool,
		n8n,
		executions: new N8nExecutions(n8nPool, options.n8nSchema),
		close,
	};
}
