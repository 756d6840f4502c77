// One throwaway n8n: a temp user folder with this package installed as a community package, credentials
// and workflows imported, chosen workflows published, then `n8n start` on 127.0.0.1. Used by the e2e
// tests, the benchmarks and `npm run dev`.
//
//   const n8n = await N8nInstance.create({ packageDir: REPO_ROOT, credentials, workflows, publish: [id] });
//   await n8n.start();            // resolves when ready and every published webhook is registered
//   await fetch(n8n.webhookUrl('idempotency-claim'), …);
//   await n8n.stop();             // the server only (n8n execute needs it stopped)
//   await n8n.execute(id);        // a Manual Trigger workflow through the CLI
//   await n8n.close();            // stop and delete the user folder (unless it was given: kept)
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../freePort';
import { withClient } from '../postgres/connections';
import type { WorkflowJson } from './workflows';
import { runN8nCli, tail, type CliFailure } from './cli';
import { installCommunityPackage, packPackage } from './communityPackage';
import type { CredentialEntry } from './credentials';
import { n8nEnv } from './env';
import { N8nProcess, logTailOf } from './process';
import { ensureRuntime, type Log, type Runtime } from './runtime';

const WEBHOOK_NODE_TYPE = 'n8n-nodes-base.webhook';

export interface N8nInstanceOptions {
	/** A built package folder to `npm pack` and install as a community package. */
	packageDir?: string;
	/** Entries for `n8n import:credentials` (templateCredentials() gives the templates' two). */
	credentials?: CredentialEntry[];
	/** Workflow JSON objects, each with an `id`. */
	workflows?: WorkflowJson[];
	/** Ids of workflows to publish (make live). */
	publish?: string[];
	/** n8n's own database in Postgres (default: SQLite in the user folder). */
	databaseUrl?: string;
	databaseSchema?: string;
	/** A user folder to keep (made when missing, left in place by close()); default: a temp folder. */
	userFolder?: string;
	/** Editor, REST API and webhook port; default: a free one. */
	port?: number;
	/** Extra environment for every n8n process. */
	env?: Record<string, string>;
	log?: Log;
}

/** What `n8n execute --rawOutput` returns; only the part the tests read. */
export interface CliRun {
	/** True once the run ended (n8n stored it finished), whatever its status. */
	finished?: boolean;
	data: {
		resultData: {
			runData: Record<
				string,
				Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }>> } }>
			>;
		};
	};
}

export class N8nInstance {
	readonly baseUrl: string;
	readonly editorUrl: string;
	readonly logFile: string;
	private server: N8nProcess | null = null;

	private constructor(
		readonly runtime: Runtime,
		readonly userFolder: string,
		readonly port: number,
		readonly env: NodeJS.ProcessEnv,
		private readonly options: N8nInstanceOptions,
		private readonly log: Log,
	) {
		this.baseUrl = `http://127.0.0.1:${port}`;
		this.editorUrl = `${this.baseUrl}/`;
		this.logFile = join(userFolder, 'n8n.log');
	}

	/** Installs the package and imports credentials and workflows; the server is not started yet. */
	static async create(options: N8nInstanceOptions = {}): Promise<N8nInstance> {
		const log = options.log ?? ((message: string) => process.stderr.write(`[n8n] ${message}\n`));
		const runtime = await ensureRuntime({ log, sqlite: !options.databaseUrl });
		const userFolder = options.userFolder ?? mkdtempSync(join(tmpdir(), 'n8n-idempotency-'));
		mkdirSync(userFolder, { recursive: true });
		chmodSync(userFolder, 0o755);
		const port = options.port ?? (await freePort());
		let brokerPort = await freePort();
		while (brokerPort === port) brokerPort = await freePort();
		const env = n8nEnv({
			userFolder,
			port,
			brokerPort,
			databaseUrl: options.databaseUrl,
			databaseSchema: options.databaseSchema,
			n8nMajor: runtime.major,
			extra: options.env,
		});
		const instance = new N8nInstance(runtime, userFolder, port, env, options, log);
		try {
			await instance.prepare();
		} catch (error) {
			await instance.close();
			throw error;
		}
		return instance;
	}

	webhookUrl(path: string): string {
		return `${this.baseUrl}/webhook/${path}`;
	}

	/** Process id of `n8n start` while it runs (for memory readings), else null. */
	get pid(): number | null {
		return this.server?.pid ?? null;
	}

	cli(args: string[]): Promise<{ stdout: string; stderr: string }> {
		return runN8nCli(this.runtime, args, this.env);
	}

	/** Starts `n8n start`; resolves once /healthz/readiness answers and published webhooks are live. */
	async start({ timeoutMs = 180_000 } = {}): Promise<void> {
		if (this.server) throw new Error('n8n is already running');
		const server = this.spawn(['start'], this.logFile);
		this.server = server;
		const started = Date.now();
		try {
			await server.waitUntilReady(`${this.baseUrl}/healthz/readiness`, timeoutMs, 'n8n readiness');
			await this.waitForPublishedWebhooks(
				server,
				this.baseUrl,
				Math.max(5_000, timeoutMs - (Date.now() - started)),
			);
		} catch (error) {
			await this.stop();
			throw withLogTail(error, this);
		}
		this.log(`n8n ready on ${this.baseUrl} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}

	/**
	 * Another n8n process on this instance's user folder and database (`n8n worker`, `n8n webhook`), with
	 * `env` over the instance's environment.
	 */
	spawn(args: string[], logFile: string, env: Record<string, string> = {}): N8nProcess {
		return N8nProcess.spawn(this.runtime, args, { ...this.env, ...env }, logFile);
	}

	/** Waits until every published webhook is registered at `baseUrl` (this instance's or another process's). */
	async waitForPublishedWebhooks(
		server: N8nProcess,
		baseUrl: string,
		timeoutMs: number,
	): Promise<void> {
		for (const { path, method } of this.publishedWebhooks()) {
			await server.waitUntil(() => webhookIsRegistered(`${baseUrl}/webhook/${path}`, method), {
				timeoutMs,
				what: `webhook ${method} /webhook/${path} on ${baseUrl}`,
			});
		}
	}

	/** Stops the server and everything it spawned (whole process group). Safe to call twice. */
	async stop({ graceMs = 15_000 } = {}): Promise<void> {
		const server = this.server;
		this.server = null;
		await server?.stop({ graceMs });
	}

	/** SIGKILL to n8n and its task runner, as when its container dies; start() brings it back on the same data. */
	async kill(): Promise<void> {
		const server = this.server;
		this.server = null;
		await server?.kill();
	}

	/** Runs a workflow that starts with a Manual Trigger through `n8n execute` (server stopped). */
	async execute(workflowId: string): Promise<CliRun> {
		if (this.server)
			throw new Error('stop the n8n server first: `n8n execute` needs the task broker port');
		let stdout: string;
		try {
			({ stdout } = await this.cli(['execute', `--id=${workflowId}`, '--rawOutput']));
		} catch (error) {
			// n8n 2.41's CLI has been seen to die by SIGSEGV while shutting down, after it printed and stored
			// a finished run: that run is the result; a crash before the run finished is still a failure.
			const { signal, stdout: printed } = error as CliFailure;
			const run = signal ? printedRun(printed) : undefined;
			if (!run?.finished) throw error;
			this.log(`n8n execute died by ${signal} after its run finished`);
			return run;
		}
		const run = printedRun(stdout);
		if (!run) throw new Error(`n8n execute printed no JSON:\n${tail(stdout, 40)}`);
		return run;
	}

	logTail(lines = 80): string {
		return logTailOf(this.logFile, lines);
	}

	/**
	 * Stops n8n and removes the user folder, unless it was given or N8N_KEEP_USER_FOLDER=1 (debugging).
	 */
	async close(): Promise<void> {
		await this.stop();
		if (this.options.userFolder) return;
		if (process.env.N8N_KEEP_USER_FOLDER === '1') this.log(`kept user folder ${this.userFolder}`);
		else rmSync(this.userFolder, { recursive: true, force: true });
	}

	private async prepare(): Promise<void> {
		const { packageDir, credentials = [], workflows = [], publish = [] } = this.options;
		if (packageDir) {
			const tarball = await packPackage(packageDir, join(this.userFolder, 'pack'));
			this.log('installing the packed package as a community package…');
			await installCommunityPackage(tarball, this.userFolder);
		}
		if (credentials.length) await this.importEntries('credentials', credentials);
		if (workflows.length) await this.importEntries('workflow', workflows);
		// 1.x runs a sub-workflow unpublished and refuses to activate one that only other workflows start.
		const published = publish.filter(
			(id) => this.runtime.major >= 2 || !onlyCalled(workflows.find((w) => w.id === id)),
		);
		if (published.length) await this.publishWorkflows(published);
	}

	/**
	 * The first workflow through n8n's own command (2.x "publishes", 1.x activates: publish:workflow does not
	 * exist there); the others in one statement that does what that command does in both versions (sets
	 * `active` and `activeVersionId` to the imported version), because each command is a boot of n8n:
	 * 10 s or more on a busy machine, most of an e2e suite's set-up. n8n on SQLite gets the command for each.
	 */
	private async publishWorkflows(ids: string[]): Promise<void> {
		const command = (id: string) =>
			this.runtime.major >= 2
				? ['publish:workflow', `--id=${id}`]
				: ['update:workflow', `--id=${id}`, '--active=true'];
		const { databaseUrl, databaseSchema = 'public' } = this.options;
		const [first, ...rest] = ids;
		for (const id of databaseUrl ? [first] : ids) {
			this.log(`publishing workflow ${id}…`);
			await this.cli(command(id));
		}
		if (!databaseUrl || !rest.length) return;
		this.log(`publishing ${rest.length} more workflows in one statement…`);
		const { rowCount } = await withClient(databaseUrl, (client) =>
			client.query(
				`UPDATE "${databaseSchema}".workflow_entity w SET active = true, "activeVersionId" = w."versionId"
				 WHERE w.id = ANY($1) AND NOT w."isArchived" AND EXISTS (
				   SELECT 1 FROM "${databaseSchema}".workflow_history h
				   WHERE h."workflowId" = w.id AND h."versionId" = w."versionId")`,
				[rest],
			),
		);
		if (rowCount !== rest.length)
			throw new Error(`published ${rowCount} of ${rest.length} workflows: ${rest.join(', ')}`);
	}

	/** `n8n import:<kind>` of these entries, written to a file in the user folder first. */
	private async importEntries(kind: 'credentials' | 'workflow', entries: object[]): Promise<void> {
		const file = join(this.userFolder, `${kind}.import.json`);
		writeFileSync(file, JSON.stringify(entries, null, 2));
		this.log(`importing ${kind} (${entries.length})…`);
		await this.cli([`import:${kind}`, `--input=${file}`]);
	}

	private publishedWebhooks(): Array<{ path: string; method: string }> {
		const published = new Set(this.options.publish ?? []);
		return (this.options.workflows ?? [])
			.filter((workflow) => published.has(workflow.id))
			.flatMap((workflow) =>
				workflow.nodes.filter((node) => node.type === WEBHOOK_NODE_TYPE && !node.disabled),
			)
			.map((node) => ({
				path: String(node.parameters.path),
				method: String(node.parameters.httpMethod ?? 'GET'),
			}));
	}
}

/**
 * A CORS preflight without a requested method: n8n answers it with the methods registered at the path
 * (read from its webhook table), starts no execution and, unlike a request with another method, logs
 * nothing while the path is not registered yet.
 */
async function webhookIsRegistered(url: string, method: string): Promise<boolean> {
	try {
		const response = await fetch(url, {
			method: 'OPTIONS',
			headers: { origin: 'http://127.0.0.1' },
		});
		await response.arrayBuffer();
		const allowed = response.headers.get('access-control-allow-methods') ?? '';
		return response.ok && allowed.split(/,\s*/).includes(method);
	} catch {
		return false;
	}
}

/** Anything whose n8n log can explain a failure: an instance, a queue-mode cluster. */
interface HasN8nLog {
	logTail(lines?: number): string;
}

/** Runs `work`; when it fails, the error's message ends with the last lines of n8n's log. */
export async function explainedByN8nLog<T>(
	n8n: HasN8nLog | undefined,
	work: () => Promise<T>,
): Promise<T> {
	try {
		return await work();
	} catch (error) {
		throw withLogTail(error, n8n);
	}
}

function withLogTail(error: unknown, n8n: HasN8nLog | undefined): unknown {
	const log = n8n ? n8n.logTail(60) : '(n8n not started)';
	if (error instanceof Error) error.message += `\n--- n8n log (last lines) ---\n${log}`;
	return error;
}

/** The run `n8n execute --rawOutput` printed as pretty JSON, possibly after log lines; none if it did not. */
function printedRun(stdout: string): CliRun | undefined {
	const start = stdout.search(/^\{/m);
	if (start < 0) return undefined;
	try {
		return JSON.parse(stdout.slice(start)) as CliRun;
	} catch {
		return undefined;
	}
}

/** A workflow whose only trigger is the Execute Sub-workflow Trigger. */
function onlyCalled(workflow: WorkflowJson | undefined): boolean {
	const triggers = (workflow?.nodes ?? []).filter((node) => /trigger|webhook/i.test(node.type));
	return (
		triggers.length > 0 &&
		triggers.every((node) => node.type === 'n8n-nodes-base.executeWorkflowTrigger')
	);
}
