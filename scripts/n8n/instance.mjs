// One throwaway n8n instance: a temp user folder with this package installed as a community package,
// credentials and workflows imported, chosen workflows published, then `n8n start` on 127.0.0.1.
// Used by the end-to-end test and by `npm run dev`.
//
//   const n8n = await createN8nInstance({ tarball, credentials, workflows, publish: [id] });
//   await n8n.start();            // resolves when ready and every published webhook is registered
//   await fetch(n8n.webhookUrl('idempotency-claim'), …);
//   await n8n.stop();             // the server only (n8n execute needs it stopped)
//   await n8n.execute(id);        // a Manual Trigger workflow through the CLI
//   await n8n.dispose();          // stop and delete the user folder
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCommunityPackage, packPackage } from './community-package.mjs';
import { freePort } from './free-port.mjs';
import { runN8nCli, tail } from './n8n-cli.mjs';
import { n8nEnv } from './n8n-env.mjs';
import { ensureRuntime } from './runtime.mjs';

const WEBHOOK_NODE_TYPE = 'n8n-nodes-base.webhook';

/** A workflow id in n8n's own format (nanoid-like, 16 alphanumerics). */
export function newWorkflowId() {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	return Array.from(randomBytes(16), (byte) => alphabet[byte % alphabet.length]).join('');
}

/**
 * @param {object} options
 * @param {string} [options.packageDir]    a built package folder to `npm pack` and install as a community package
 * @param {string} [options.tarball]       or an existing `npm pack` output to install
 * @param {object[]} [options.credentials] n8n credential export entries ({ id, name, type, data })
 * @param {object[]} [options.workflows]   workflow JSON objects, each with an `id`
 * @param {string[]} [options.publish]     ids of workflows to publish (make live)
 * @param {string} [options.databaseUrl]   n8n's own database in Postgres (default: SQLite in the folder)
 * @param {string} [options.databaseSchema]
 * @param {Record<string,string>} [options.env] extra environment for every n8n process
 * @param {(message: string) => void} [options.log]
 */
export async function createN8nInstance(options = {}) {
	const log = options.log ?? ((message) => process.stderr.write(`[n8n] ${message}\n`));
	const runtime = await ensureRuntime({ log });

	const userFolder = mkdtempSync(join(tmpdir(), 'n8n-idempotency-'));
	chmodSync(userFolder, 0o755);
	const port = await freePort();
	let brokerPort = await freePort();
	while (brokerPort === port) brokerPort = await freePort();
	const env = n8nEnv({
		userFolder,
		port,
		brokerPort,
		databaseUrl: options.databaseUrl,
		databaseSchema: options.databaseSchema,
		extra: options.env,
	});
	const baseUrl = `http://127.0.0.1:${port}`;
	const logFile = join(userFolder, 'n8n.log');
	const workflows = options.workflows ?? [];
	const published = new Set(options.publish ?? []);

	let server = null; // { child, exited: Promise<void> }

	const instance = {
		userFolder,
		port,
		baseUrl,
		editorUrl: `${baseUrl}/`,
		logFile,
		runtime,
		env,
		webhookUrl: (path) => `${baseUrl}/webhook/${path}`,
		cli: (args, cliOptions) => runN8nCli(runtime, args, env, cliOptions),

		/** Starts `n8n start`; resolves once /healthz/readiness answers and published webhooks are live. */
		async start({ timeoutMs = 180_000 } = {}) {
			if (server) throw new Error('n8n is already running');
			const out = openSync(logFile, 'a');
			// detached: its own process group, so stop() also reaches the task runner it spawns.
			const child = spawn(runtime.nodeBin, [runtime.n8nBin, 'start'], {
				env,
				cwd: userFolder,
				detached: true,
				stdio: ['ignore', out, out],
			});
			closeSync(out);
			// Last resort if the caller dies without stop() (uncaught error, broken pipe): take n8n with it.
			const killOnExit = () => killGroup(child.pid, 'SIGKILL');
			process.once('exit', killOnExit);
			const exited = new Promise((resolve) =>
				child.once('exit', (code, signal) => {
					process.removeListener('exit', killOnExit);
					resolve({ code, signal });
				}),
			);
			server = { child, exited };
			const started = Date.now();
			try {
				await waitUntil(
					async () => (await httpStatus(`${baseUrl}/healthz/readiness`)) === 200,
					{ timeoutMs, exited, what: 'n8n readiness' },
				);
				for (const { path, method } of publishedWebhooks(workflows, published)) {
					await waitUntil(() => webhookIsRegistered(instance.webhookUrl(path), method), {
						timeoutMs: Math.max(5_000, timeoutMs - (Date.now() - started)),
						exited,
						what: `webhook ${method} /webhook/${path}`,
					});
				}
			} catch (error) {
				await instance.stop();
				error.message += `\n--- n8n log (last lines) ---\n${instance.logTail()}`;
				throw error;
			}
			log(`n8n ready on ${baseUrl} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
		},

		/** Stops the server and everything it spawned (whole process group). Safe to call twice. */
		async stop({ graceMs = 15_000 } = {}) {
			if (!server) return;
			const { child, exited } = server;
			server = null;
			if (child.exitCode !== null || child.signalCode !== null) {
				killGroup(child.pid, 'SIGKILL'); // n8n died on its own; its task runner may not have
				return;
			}
			killGroup(child.pid, 'SIGTERM');
			const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs);
			await exited;
			clearTimeout(timer);
			// The task runner may outlive its parent for a moment; make sure the group is gone.
			killGroup(child.pid, 'SIGKILL');
		},

		get running() {
			return server !== null;
		},

		/** Process id of `n8n start` while it runs (for memory readings), else null. */
		get pid() {
			return server?.child.pid ?? null;
		},

		/** Runs a workflow that starts with a Manual Trigger through `n8n execute` (server must be stopped). */
		async execute(workflowId) {
			if (server) throw new Error('stop the n8n server first: `n8n execute` needs the task broker port');
			const { stdout } = await runN8nCli(runtime, ['execute', `--id=${workflowId}`, '--rawOutput'], env);
			return parseExecuteOutput(stdout);
		},

		logTail(lines = 80) {
			try {
				return tail(readFileSync(logFile, 'utf8'), lines);
			} catch {
				return '(no n8n log yet)';
			}
		},

		/** Stops n8n and removes the user folder (kept when N8N_KEEP_USER_FOLDER=1, for debugging). */
		async dispose() {
			await instance.stop();
			if (process.env.N8N_KEEP_USER_FOLDER === '1') log(`kept user folder ${userFolder}`);
			else rmSync(userFolder, { recursive: true, force: true });
		},
	};

	try {
		const tarball = options.packageDir ? await packPackage(options.packageDir, join(userFolder, 'pack')) : options.tarball;
		if (tarball) {
			log('installing the packed package as a community package…');
			await installCommunityPackage(tarball, userFolder);
		}
		if (options.credentials?.length) {
			const file = join(userFolder, 'credentials.import.json');
			writeFileSync(file, JSON.stringify(options.credentials, null, 2));
			log('importing credentials…');
			await instance.cli(['import:credentials', `--input=${file}`]);
		}
		if (workflows.length) {
			for (const workflow of workflows) if (!workflow.id) throw new Error(`workflow "${workflow.name}" has no id`);
			const file = join(userFolder, 'workflows.import.json');
			writeFileSync(file, JSON.stringify(workflows, null, 2));
			log(`importing ${workflows.length} workflow(s)…`);
			await instance.cli(['import:workflow', `--input=${file}`]);
		}
		for (const id of published) {
			log(`publishing workflow ${id}…`);
			await instance.cli(['publish:workflow', `--id=${id}`]);
		}
	} catch (error) {
		await instance.dispose();
		throw error;
	}
	return instance;
}

function publishedWebhooks(workflows, published) {
	return workflows
		.filter((workflow) => published.has(workflow.id))
		.flatMap((workflow) => workflow.nodes.filter((node) => node.type === WEBHOOK_NODE_TYPE && !node.disabled))
		.map((node) => ({ path: node.parameters.path, method: node.parameters.httpMethod ?? 'GET' }));
}

/** A probe that starts no execution: asking with another method tells "registered for POST" from "unknown". */
async function webhookIsRegistered(url, method) {
	const probeMethod = method === 'GET' ? 'DELETE' : 'GET';
	try {
		const response = await fetch(url, { method: probeMethod });
		const text = await response.text();
		return text.includes(`not registered for ${probeMethod} requests`);
	} catch {
		return false;
	}
}

async function httpStatus(url) {
	try {
		const response = await fetch(url);
		await response.arrayBuffer();
		return response.status;
	} catch {
		return 0;
	}
}

async function waitUntil(check, { timeoutMs, exited, what, intervalMs = 250 }) {
	let processExit = null;
	exited.then((result) => (processExit = result));
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (processExit) throw new Error(`n8n exited (${JSON.stringify(processExit)}) while waiting for ${what}`);
		if (await check()) return;
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
	throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
}

function killGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
	} catch (error) {
		if (error.code !== 'ESRCH') throw error;
	}
}

/** `n8n execute --rawOutput` prints the run as pretty JSON, possibly after log lines. */
function parseExecuteOutput(stdout) {
	const start = stdout.search(/^\{/m);
	if (start < 0) throw new Error(`n8n execute printed no JSON:\n${tail(stdout, 40)}`);
	return JSON.parse(stdout.slice(start));
}
