/**
 * `npm run dev` keeps what it made: started, given a workflow through n8n's REST API and a claimed event,
 * stopped with SIGINT to its process group (what Ctrl-C sends), started again: the same port, the same
 * workflow ids, the workflow and the claim still there, the shipped workflows not imported twice.
 * `--fresh` starts from an empty instance again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { callApi } from '../../harness/webhooks/apiCaller';
import { templateSignature } from '../../harness/webhooks/deliver';
import { freePort } from '../../harness/freePort';
import { ownerSessionCookie } from '../../harness/n8n/manualRuns';
import { REPO_ROOT } from '../../harness/repo';

const SHIPPED_NAMES_COUNT = 5; // scripts/dev.ts SHIPPED_WORKFLOWS
const EVENT = JSON.stringify({ id: 'evt_dev_kept', type: 'invoice.paid' });

interface RunningDev {
	child: ChildProcess;
	output: () => string;
	editorUrl: string;
	webhookUrl: string;
	apiUrl: string;
}

let stateDir: string;
let port: number;
let running: RunningDev | undefined;

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'idempotency-dev-state-'));
	chmodSync(stateDir, 0o755); // the embedded server runs as user postgres when started by root
	port = await freePort();
});

afterAll(async () => {
	if (running) await stopDev(running).catch(() => undefined);
	rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

/** `npm run dev` (without its build: the e2e run built the package) on this test's state folder and port. */
function startDev(args: string[] = []): Promise<RunningDev> {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^(DATABASE_URL|PG[A-Z]+|DEV_)/.test(name)),
	);
	const child = spawn(
		process.execPath,
		['--import', 'tsx', join('scripts', 'dev.ts'), '--no-build', ...args],
		{
			cwd: REPO_ROOT,
			env: { ...env, DEV_STATE_DIR: stateDir, DEV_PORT: String(port) },
			detached: true, // its own process group, so SIGINT to the group is a terminal's Ctrl-C
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	let output = '';
	child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() => reject(new Error(`dev not ready in 10 min:\n${output}`)),
			600_000,
		);
		const poll = setInterval(() => {
			if (!output.includes('Press Ctrl-C')) return;
			clearInterval(poll);
			clearTimeout(timer);
			const editorUrl = /n8n editor:\s+(\S+)/.exec(output)![1];
			const webhookUrl = /webhook:\s+POST (\S+)/.exec(output)![1];
			const apiUrl = /api:\s+POST (\S+)/.exec(output)![1];
			resolve({ child, output: () => output, editorUrl, webhookUrl, apiUrl });
		}, 200);
		child.once('exit', (code) => {
			clearInterval(poll);
			clearTimeout(timer);
			reject(new Error(`dev exited with code ${code} before it was ready:\n${output}`));
		});
	});
}

/** SIGINT to the whole process group, as Ctrl-C in a terminal; resolves with the exit code. */
function stopDev(dev: RunningDev): Promise<number | null> {
	running = undefined;
	if (dev.child.exitCode !== null) return Promise.resolve(dev.child.exitCode);
	return new Promise((resolve) => {
		dev.child.once('exit', (code) => resolve(code));
		process.kill(-dev.child.pid!, 'SIGINT');
	});
}

async function workflows(editorUrl: string): Promise<Array<{ id: string; name: string }>> {
	const cookie = await ownerSessionCookie(editorUrl.replace(/\/$/, ''));
	const response = await fetch(`${editorUrl}rest/workflows`, { headers: { cookie } });
	expect(response.status).toBe(200);
	return ((await response.json()) as { data: Array<{ id: string; name: string }> }).data;
}

async function createWorkflow(editorUrl: string, name: string): Promise<string> {
	const cookie = await ownerSessionCookie(editorUrl.replace(/\/$/, ''));
	const response = await fetch(`${editorUrl}rest/workflows`, {
		method: 'POST',
		headers: { cookie, 'content-type': 'application/json' },
		body: JSON.stringify({ name, nodes: [], connections: {}, settings: {} }),
	});
	const text = await response.text();
	expect({ status: response.status, text }).toMatchObject({ status: 200 });
	return (JSON.parse(text) as { data: { id: string } }).data.id;
}

/** The printed API curl line's request; its status and body. */
async function orderBook(apiUrl: string): Promise<{ status: number; body: string }> {
	const { status, body } = await callApi(apiUrl, '{"item":"book"}', {
		'idempotency-key': 'dev-order-1',
	});
	return { status, body };
}

async function deliverEvent(webhookUrl: string): Promise<string> {
	const response = await fetch(webhookUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...templateSignature(EVENT) },
		body: EVENT,
	});
	return JSON.stringify(await response.json());
}

it('keeps workflows, ids, port and claims across a Ctrl-C and a restart; --fresh starts empty', async () => {
	running = await startDev();
	const first = running;
	expect(first.editorUrl).toBe(`http://127.0.0.1:${port}/`);
	const shipped = await workflows(first.editorUrl);
	expect(shipped).toHaveLength(SHIPPED_NAMES_COUNT);
	expect(shipped.map((workflow) => workflow.name)).toContain('Report stuck idempotency claims');
	const createdId = await createWorkflow(first.editorUrl, 'Kept between runs');
	expect(await deliverEvent(first.webhookUrl)).toContain('processed');
	// The API template's curl line: one Idempotency-Key twice, the same 201 both times.
	const order = [await orderBook(first.apiUrl), await orderBook(first.apiUrl)];
	expect(order[0]).toMatchObject({
		status: 201,
		body: expect.stringContaining('"orderId":"order_'),
	});
	expect(order[1]).toEqual(order[0]);

	expect(await stopDev(first)).toBe(0);
	expect(first.output()).toContain('[dev] stopped');
	const postgresPort = Number(readFileSync(join(stateDir, 'postgres.port'), 'utf8'));

	running = await startDev();
	const second = running;
	expect(second.editorUrl).toBe(first.editorUrl);
	expect(Number(readFileSync(join(stateDir, 'postgres.port'), 'utf8'))).toBe(postgresPort);
	const kept = await workflows(second.editorUrl);
	expect(kept.map((workflow) => workflow.id).sort()).toEqual(
		[...shipped.map((workflow) => workflow.id), createdId].sort(),
	);
	expect(second.output()).not.toContain('importing workflow');
	expect(await deliverEvent(second.webhookUrl)).toContain('duplicate');
	expect(await stopDev(second)).toBe(0);

	running = await startDev(['--fresh']);
	const fresh = running;
	const afresh = await workflows(fresh.editorUrl);
	expect(afresh.map((workflow) => workflow.id).sort()).toEqual(
		shipped.map((workflow) => workflow.id).sort(),
	);
	expect(await deliverEvent(fresh.webhookUrl)).toContain('processed');
	expect(await stopDev(fresh)).toBe(0);
}, 1_500_000);
