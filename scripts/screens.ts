// `npm run screens`: the README's pictures, taken from the real editor. Starts an embedded Postgres and
// n8n with the packed package and the Idempotency Claim template (harness/browser/editorN8n.ts, over
// harness/stack.ts), signs in with headless Chromium, and saves into docs/images/:
//   template-canvas.png        the template on the canvas
//   claim-node-panel.png       the Idempotency Claim node's panel: Key Source, Claim Mode, Lease, hints
//   execution-duplicate.png    an execution of a repeated delivery, gone down Duplicate
// The browser test (test/e2e/editor.e2e.test.ts) walks the same way and checks what these show.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { startEditorN8n, type EditorN8n } from '../harness/browser/editorN8n';
import { N8nEditor } from '../harness/browser/n8nEditor';
import { OWNER } from '../harness/n8n/owner';
import { startPostgres, type PostgresServer } from '../harness/postgres/server';
import { REPO_ROOT } from '../harness/repo';

const SCREENS_DIR = join(REPO_ROOT, 'docs', 'images');
const CLAIM_NODE = 'Idempotency Claim';

const log = (message: string) => process.stderr.write(`[screens] ${message}\n`);

async function main(): Promise<void> {
	mkdirSync(SCREENS_DIR, { recursive: true });
	let postgres: PostgresServer | undefined;
	let n8n: EditorN8n | undefined;
	let editor: N8nEditor | undefined;
	try {
		postgres = await startPostgres();
		n8n = await startEditorN8n(postgres.url, log);
		editor = await N8nEditor.open(n8n.n8n.baseUrl);
		log('signing in…');
		await editor.signIn(OWNER.email, OWNER.password);

		await editor.openWorkflow(n8n.template.id);
		await save(editor, 'template-canvas.png');

		const panel = await editor.openNode(CLAIM_NODE);
		await save(editor, 'claim-node-panel.png', panel);
		await editor.closeNode();

		const { answers, executions } = await n8n.deliverTwice('evt_1Q2w3e4R5t6Y');
		log(`delivered one event twice: ${answers.map((answer) => answer.body.status).join(', ')}`);
		await editor.openExecution(n8n.template.id, executions[1].id);
		await save(editor, 'execution-duplicate.png');

		const problems = editor.console.unexpected();
		if (problems.length)
			throw new Error(`browser console errors:\n${JSON.stringify(problems, null, 2)}`);
	} finally {
		await editor?.close();
		await n8n?.close();
		await postgres?.stop();
	}
}

async function save(
	editor: N8nEditor,
	file: string,
	target?: Parameters<N8nEditor['screenshot']>[1],
): Promise<void> {
	const path = join(SCREENS_DIR, file);
	await editor.screenshot(path, target);
	log(`saved ${path}`);
}

main().catch((error: Error) => {
	log(error?.stack ?? String(error));
	process.exitCode = 1;
});
