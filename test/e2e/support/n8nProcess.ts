import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const CONTROL_SCRIPT = join(__dirname, '..', '..', '..', 'scripts', 'n8n', 'instance-process.mjs');

export interface N8nInstanceInfo {
	userFolder: string;
	port: number;
	baseUrl: string;
	editorUrl: string;
	logFile: string;
	running: boolean;
}

/** Options of createN8nInstance in scripts/n8n/instance.mjs (JSON-serialisable subset). */
export interface N8nInstanceOptions {
	packageDir?: string;
	credentials?: object[];
	/** Adds the credentials the bundled templates reference (scripts/n8n/credentials.mjs) for this database. */
	credentialsForDatabase?: string;
	workflows?: Array<{ id: string; name: string; nodes: object[] }>;
	publish?: string[];
	databaseUrl?: string;
	databaseSchema?: string;
	env?: Record<string, string>;
}

/** What `n8n execute --rawOutput` returns; only the part the tests read. */
export interface CliRun {
	data: { resultData: { runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }>> } }>> } };
}

/**
 * A real n8n, driven through scripts/n8n/instance-process.mjs in a child process (the harness is ESM; jest
 * runs these tests as CommonJS). Closing the child's stdin disposes the instance, so a crashed test run
 * leaves no n8n behind.
 */
export class N8nProcess {
	private nextId = 1;
	private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
	private exited = false;
	info!: N8nInstanceInfo;

	private constructor(private readonly child: ChildProcess) {
		createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(line));
		child.once('exit', (code) => {
			this.exited = true;
			for (const { reject } of this.pending.values()) reject(new Error(`n8n control process exited (${code})`));
			this.pending.clear();
		});
	}

	static async create(options: N8nInstanceOptions): Promise<N8nProcess> {
		// stderr inherited: install/import progress shows up in the test output.
		const child = spawn(process.execPath, [CONTROL_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
		const n8n = new N8nProcess(child);
		try {
			n8n.info = await n8n.call<N8nInstanceInfo>('create', options);
		} catch (error) {
			await n8n.close();
			throw error;
		}
		return n8n;
	}

	webhookUrl(path: string): string {
		return `${this.info.baseUrl}/webhook/${path}`;
	}

	async start(): Promise<void> {
		this.info = await this.call<N8nInstanceInfo>('start');
	}

	async stop(): Promise<void> {
		this.info = await this.call<N8nInstanceInfo>('stop');
	}

	/** `n8n execute --id` of a Manual Trigger workflow (the server must be stopped). */
	execute(workflowId: string): Promise<CliRun> {
		return this.call<CliRun>('execute', { workflowId });
	}

	async logTail(lines = 80): Promise<string> {
		if (this.exited) return '(n8n control process has exited)';
		return this.call<string>('logTail', { lines }).catch((error: Error) => `(log unavailable: ${error.message})`);
	}

	/** Disposes the instance (stops n8n, deletes its folder) and ends the control process. */
	async close(): Promise<void> {
		if (this.exited) return;
		const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
		this.child.stdin!.end();
		await exited;
	}

	private call<T>(op: string, args: object = {}): Promise<T> {
		if (this.exited) return Promise.reject(new Error('n8n control process has exited'));
		const id = this.nextId++;
		return new Promise<T>((resolve, reject) => {
			this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
			this.child.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
		});
	}

	private onLine(line: string): void {
		let message: { id: number; ok: boolean; result?: unknown; error?: string };
		try {
			message = JSON.parse(line);
		} catch {
			return; // not a protocol line
		}
		const waiter = this.pending.get(message.id);
		if (!waiter) return;
		this.pending.delete(message.id);
		if (message.ok) waiter.resolve(message.result);
		else waiter.reject(new Error(message.error));
	}
}
