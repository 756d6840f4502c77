// Runs one n8n CLI command (import:credentials, import:workflow, publish:workflow, execute, …) with the
// instance's environment and the cached Node 24 runtime. CLI commands write n8n's database directly, so
// ones that change what the server serves must run before it starts (or be followed by a restart).
import { spawn } from 'node:child_process';

import type { Runtime } from './runtime';

/** A CLI command that failed, with everything it printed and the signal that ended it, if one did. */
export interface CliFailure extends Error {
	stdout: string;
	signal: NodeJS.Signals | null;
}

export function runN8nCli(
	runtime: Runtime,
	args: string[],
	env: NodeJS.ProcessEnv,
	{ timeoutMs = 180_000 } = {},
): Promise<{ stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], {
			env,
			cwd: env.N8N_USER_FOLDER,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk) => (stdout += chunk));
		child.stderr.on('data', (chunk) => (stderr += chunk));
		const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
		child.once('error', (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.once('exit', (code, signal) => {
			clearTimeout(timer);
			if (code === 0) return resolve({ stdout, stderr });
			const why = signal ? `killed by ${signal}` : `exit ${code}`;
			reject(
				Object.assign(
					new Error(`n8n ${args.join(' ')} failed (${why}):\n${tail(stdout + stderr, 60)}`),
					{ stdout, signal },
				),
			);
		});
	});
}

export function tail(text: string, lines: number): string {
	return text.split('\n').slice(-lines).join('\n');
}
