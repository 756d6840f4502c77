// Runs one n8n CLI command (import:credentials, import:workflow, publish:workflow, execute, …) with the
// instance's environment and the cached Node 24 runtime. CLI commands write n8n's database directly, so
// ones that change what the server serves must run before it starts (or be followed by a restart).
import { spawn } from 'node:child_process';

/**
 * @param {{ nodeBin: string, n8nBin: string }} runtime  from runtime.mjs
 * @param {string[]} args  e.g. ['import:workflow', '--input=/tmp/w.json']
 * @param {Record<string,string>} env  from n8n-env.mjs
 * @returns {Promise<{ stdout: string, stderr: string }>}
 */
export function runN8nCli(runtime, args, env, { timeoutMs = 180_000 } = {}) {
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
			reject(new Error(`n8n ${args.join(' ')} failed (${why}):\n${tail(stdout + stderr, 60)}`));
		});
	});
}

export function tail(text, lines) {
	return text.split('\n').slice(-lines).join('\n');
}
