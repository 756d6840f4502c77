// The one recipe every real-n8n run follows (the e2e suites, the benchmarks, `npm run dev`, the README's
// pictures): a Postgres; the workflows' tables (workflows/processed_events.sql) in an app database; a
// schema for n8n's own tables; and a real n8n with this package installed from `npm pack`, the templates'
// credentials, the given workflows imported and published.
import { Pool } from 'pg';

import { templateCredentials, type CredentialEntry } from './n8n/credentials';
import { N8nExecutions } from './n8n/executions';
import { N8nInstance, type N8nInstanceOptions } from './n8n/instance';
import type { Log } from './n8n/runtime';
import { withCalledWorkflows, type WorkflowJson } from './n8n/workflows';
import {
	createAppDatabase,
	serverDatabase,
	tablesSql,
	type AppDatabase,
} from './postgres/appDatabase';
import { withClient } from './postgres/connections';
import { startPostgres, startTestPostgres, type PostgresServer } from './postgres/server';
import { REPO_ROOT } from './repo';

/** What runs the workflows: one n8n instance, or a queue-mode cluster. */
export interface N8nRunner {
	start(): Promise<void>;
	close(): Promise<void>;
	webhookUrl(path: string): string;
}

export interface StackOptions<Runner extends N8nRunner> {
	/** A running server to use (left running on close); default: TEST_DATABASE_URL or an embedded server. */
	postgresUrl?: string;
	/**
	 * The tables in a database of their own, owned by a login role of their own, named from this prefix and
	 * dropped on close (as on a real server, the workflows' connections and n8n's are told apart by user);
	 * default: in the server's database, as its admin.
	 */
	appDatabase?: string;
	/**
	 * A server of the caller's own for that app database (one it restarts); n8n's data then lives in a
	 * database of its own on the main server, so the restart does not take n8n down with it.
	 */
	appServerUrl?: string;
	/** Run after the tables, as the app database's owner: a caller's own tables and triggers. */
	appSql?: string;
	/** The schema of n8n's own tables, in the app database (or the one beside it, with appServerUrl). */
	n8nSchema: string;
	/** n8n keeps its own data in SQLite in its user folder instead (n8n's default; nothing for `executions`). */
	n8nOnSqlite?: boolean;
	/** A user folder and schema kept between runs (`npm run dev`): made when missing, left on close. */
	keepN8nData?: { userFolder: string };
	workflows: WorkflowJson[];
	publish: string[];
	extraCredentials?: CredentialEntry[];
	/** Editor, REST API and webhook port; default: a free one. */
	port?: number;
	/** More environment for n8n (e.g. the owner account to sign in with), and where its progress goes. */
	env?: Record<string, string>;
	log?: Log;
	/** How n8n runs (default one instance), given the package, credentials, workflows and database. */
	launch?: (options: N8nInstanceOptions & { databaseUrl: string }) => Promise<Runner>;
}

export interface Stack<Runner extends N8nRunner = N8nInstance> {
	postgres: PostgresServer;
	app: AppDatabase;
	/** The app database as its server's admin: the caller's checks. */
	pool: Pool;
	n8n: Runner;
	/** n8n's execution records, read from its schema. */
	executions: N8nExecutions;
	close(): Promise<void>;
}

export async function startStack<Runner extends N8nRunner = N8nInstance>(
	options: StackOptions<Runner>,
): Promise<Stack<Runner>> {
	const postgres = options.postgresUrl
		? await startPostgres(options.postgresUrl)
		: await startTestPostgres();
	const appServerUrl = options.appServerUrl ?? postgres.url;
	const app = options.appDatabase
		? await createAppDatabase(appServerUrl, options.appDatabase)
		: serverDatabase(appServerUrl);
	await withClient(app.appUrl, (client) => client.query(`${tablesSql()}\n${options.appSql ?? ''}`));
	const pool = new Pool({ connectionString: app.adminUrl, max: 4 });
	const n8nHome = options.appServerUrl
		? await createAppDatabase(postgres.url, `${options.appDatabase ?? 'app'}_n8n`)
		: app;
	const n8nPool = n8nHome === app ? pool : new Pool({ connectionString: n8nHome.adminUrl, max: 2 });
	const schema = options.n8nSchema;
	if (!options.keepN8nData) await n8nPool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
	await n8nPool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
	const launch =
		options.launch ??
		((instance) =>
			N8nInstance.create(
				options.n8nOnSqlite ? { ...instance, databaseUrl: undefined } : instance,
			) as Promise<N8nRunner>);
	let n8n: Runner | undefined;
	const close = async () => {
		await n8n?.close();
		if (!options.keepN8nData)
			await n8nPool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
		await pool.end();
		if (n8nHome !== app) {
			await n8nPool.end();
			await n8nHome.drop();
		}
		await app.drop();
		await postgres.stop();
	};
	try {
		n8n = (await launch({
			packageDir: REPO_ROOT,
			credentials: [...templateCredentials(app.appUrl), ...(options.extraCredentials ?? [])],
			// The sub-workflows the given ones call come along, published.
			...withCalledWorkflows(options.workflows, options.publish),
			databaseUrl: n8nHome.adminUrl,
			databaseSchema: schema,
			userFolder: options.keepN8nData?.userFolder,
			port: options.port,
			env: options.env,
			log: options.log,
		})) as Runner;
		await n8n.start();
	} catch (error) {
		// A failed start leaves no user folder, app database, schema or server behind.
		await close().catch(() => undefined);
		throw error;
	}
	return {
		postgres,
		app,
		pool,
		n8n,
		executions: new N8nExecutions(n8nPool, schema),
		close,
	};
}
