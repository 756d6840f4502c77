// One running n8n process (`n8n start`, `n8n worker`, `n8n webhook`) in its own process group, its output
// appended to a log file. Stopping or killing it reaches the task runner it spawned too, and it is taken
// along when the test process exits or is interrupted.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

import { tail } from './cli';
import type { Runtime } from './runtime';

export interface ProcessExit {
	code: number | null;
	signal: string | null;
}

export class N8nProcess {
	private readonly unwatch: () => void;
	readonly exited: Promise<ProcessExit>;

	private constructor(
		private readonly child: ChildProcess,
		readonly logFile: string,
	) {
		this.exited = new Promise((resolve) =>
			child.once('exit', (code, signal) => {
				this.unwatch();
				resolve({ code, signal });
			}),
		);
		this.unwatch = killWithCaller(child.pid!);
	}

	/** Starts `n8n <args>` with this environment; output goes to `logFile` (appended). */
	static spawn(
		runtime: Runtime,
		args: string[],
		env: NodeJS.ProcessEnv,
		logFile: string,
	): N8nProcess {
		const out = openSync(logFile, 'a');
		// detached: its own process group, so stop() also reaches the task runner it spawns.
		const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], {
			env,
			cwd: env.N8N_USER_FOLDER,
			detached: true,
			stdio: ['ignore', out, out],
		});
		closeSync(out);
		return new N8nProcess(child, logFile);
	}

	get pid(): number {
		return this.child.pid!;
	}

	/** Polls `check` until it holds; fails early when the process exits meanwhile. */
	async waitUntil(
		check: () => Promise<boolean>,
		{ timeoutMs, what, intervalMs = 250 }: { timeoutMs: number; what: string; intervalMs?: number },
	): Promise<void> {
		let processExit: ProcessExit | null = null;
		void this.exited.then((result) => (processExit = result));
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			if (processExit)
				throw new Error(`n8n exited (${JSON.stringify(processExit)}) while waiting for ${what}`);
			if (await check()) return;
			await new Promise((resolve) => setTimeout(resolve, intervalMs));
		}
		throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
	}

	/** Waits until `url` answers 200 (n8n's /healthz/readiness: database and Redis connected). */
	waitUntilReady(url: string, timeoutMs: number, what: string): Promise<void> {
		return this.waitUntil(async () => (await httpStatus(url)) === 200, { timeoutMs, what });
	}

	/** SIGTERM to the whole group, SIGKILL after `graceMs`. Safe to call twice. */
	async stop({ graceMs = 15_000 } = {}): Promise<void> {
		if (this.child.exitCode !== null || this.child.signalCode !== null) {
			killGroup(this.pid, 'SIGKILL'); // n8n died on its own; its task runner may not have
			return;
		}
		killGroup(this.pid, 'SIGTERM');
		const timer = setTimeout(() => killGroup(this.pid, 'SIGKILL'), graceMs);
		await this.exited;
		clearTimeout(timer);
		// The task runner may outlive its parent for a moment; make sure the group is gone.
		killGroup(this.pid, 'SIGKILL');
	}

	/** SIGKILL to the whole group at once, as when a container or machine dies: nothing gets to clean up. */
	async kill(): Promise<void> {
		killGroup(this.pid, 'SIGKILL');
		await this.exited;
	}

	log(): string {
		return readLog(this.logFile);
	}

	logTail(lines = 80): string {
		return logTailOf(this.logFile, lines);
	}
}

function readLog(logFile: string): string {
	try {
		return readFileSync(logFile, 'utf8');
	} catch {
		return '';
	}
}

/** The last lines of an n8n log file. */
export function logTailOf(logFile: string, lines = 80): string {
	return tail(readLog(logFile), lines) || '(no n8n log yet)';
}

export async function httpStatus(url: string): Promise<number> {
	try {
		const response = await fetch(url);
		await response.arrayBuffer();
		return response.status;
	} catch {
		return 0;
	}
}

/**
 * n8n runs in its own process group, which outlives this process unless killed: take every running one
 * along when this process exits or is interrupted. Returns the function that stops watching `pid`.
 */
function killWithCaller(pid: number): () => void {
	if (watched.size === 0) {
		process.on('exit', killWatched);
		process.on('SIGINT', onSignal);
		process.on('SIGTERM', onSignal);
	}
	watched.add(pid);
	return () => {
		watched.delete(pid);
		if (watched.size > 0) return;
		process.removeListener('exit', killWatched);
		process.removeListener('SIGINT', onSignal);
		process.removeListener('SIGTERM', onSignal);
	};
}

const watched = new Set<number>();

function killWatched(): void {
	for (const pid of watched) killGroup(pid, 'SIGKILL');
}

function onSignal(signal: NodeJS.Signals): void {
	// A caller with a handler of its own (npm run dev, the benchmarks) stops n8n itself.
	if (process.listenerCount(signal) > 1) return;
	killWatched();
	watched.clear();
	process.removeListener('exit', killWatched);
	process.removeListener('SIGINT', onSignal);
	process.removeListener('SIGTERM', onSignal);
	process.kill(process.pid, signal); // the signal's default: end this process
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
	}
}
