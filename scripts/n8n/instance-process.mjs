#!/usr/bin/env node
// Drives one n8n instance (instance.mjs) from another process over JSON lines, so a CommonJS test runner
// (jest + ts-jest) can use the ESM harness without experimental flags:
//   stdin:  {"id":1,"op":"create","args":{…createN8nInstance options…}}
//   stdout: {"id":1,"ok":true,"result":{…}}   or   {"id":1,"ok":false,"error":"…"}
// Operations: create {…options, credentialsForDatabase?}, start, stop, execute {workflowId}, logTail {lines}, dispose.
// When stdin closes (the test runner finished or died) the instance is disposed and this process exits,
// so no n8n outlives its test. Progress goes to stderr.
import { createInterface } from 'node:readline';
import { credentialsFor } from './credentials.mjs';
import { createN8nInstance } from './instance.mjs';

let instance = null;
let queue = Promise.resolve();

const operations = {
	/** createN8nInstance options; `credentialsForDatabase: url` adds the templates' credentials for that database. */
	async create({ credentialsForDatabase, ...options }) {
		if (instance) throw new Error('an instance exists already');
		if (credentialsForDatabase) options.credentials = [...(options.credentials ?? []), ...credentialsFor(credentialsForDatabase)];
		instance = await createN8nInstance(options);
		return describe();
	},
	async start(args) {
		await need().start(args);
		return describe();
	},
	async stop() {
		await need().stop();
		return describe();
	},
	async execute({ workflowId }) {
		return need().execute(workflowId);
	},
	async logTail({ lines } = {}) {
		return instance ? instance.logTail(lines) : '(no instance)';
	},
	async dispose() {
		if (instance) await instance.dispose();
		instance = null;
		return null;
	},
};

function need() {
	if (!instance) throw new Error('call create first');
	return instance;
}

function describe() {
	const { userFolder, port, baseUrl, editorUrl, logFile, running } = instance;
	return { userFolder, port, baseUrl, editorUrl, logFile, running };
}

function reply(message) {
	process.stdout.write(`${JSON.stringify(message)}\n`);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
	if (!line.trim()) return;
	// One operation at a time, in order.
	queue = queue.then(async () => {
		let request;
		try {
			request = JSON.parse(line);
			const operation = operations[request.op];
			if (!operation) throw new Error(`unknown op ${request.op}`);
			reply({ id: request.id, ok: true, result: (await operation(request.args ?? {})) ?? null });
		} catch (error) {
			reply({ id: request?.id ?? null, ok: false, error: error?.stack ?? String(error) });
		}
	});
});
lines.on('close', () => {
	queue = queue.then(async () => {
		await operations.dispose().catch((error) => process.stderr.write(`dispose failed: ${error?.stack ?? error}\n`));
		process.exit(0);
	});
});
for (const signal of ['SIGINT', 'SIGTERM']) {
	process.on(signal, () => {
		queue = queue.then(async () => {
			await operations.dispose().catch(() => {});
			process.exit(130);
		});
	});
}
