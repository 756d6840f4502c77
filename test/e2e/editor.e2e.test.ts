/**
 * The package in n8n's real editor, driven by headless Chromium (harness/browser/; `npm run screens`
 * takes the README's pictures the same way): the Idempotency Claim template opens on the canvas, the claim
 * node's panel renders its parameters and hints, the credential's test passes from the UI, a repeated
 * delivery shows as an execution that went down Duplicate, the template imports through the menu the README
 * names, and the browser console reports no errors.
 */
import { join } from 'node:path';

import type { INodeProperties } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { knownNoise } from '../../harness/browser/consoleProblems';
import { startEditorN8n, type EditorN8n } from '../../harness/browser/editorN8n';
import { N8nEditor } from '../../harness/browser/n8nEditor';
import { explainedByN8nLog } from '../../harness/n8n/instance';
import { loadShippedWorkflow } from '../../harness/n8n/workflows';
import { OWNER } from '../../harness/n8n/owner';
import { startTestPostgres, type PostgresServer } from '../../harness/postgres/server';
import { REPO_ROOT } from '../../harness/repo';

const PACKAGE_NAME = 'n8n-nodes-idempotency';
const CLAIM_NODE = 'Idempotency Claim';
const BUSINESS_WRITE = 'Write and Complete';
const RESPOND_DUPLICATE = 'Respond 200 duplicate';
const STICKY_NOTE = 'n8n-nodes-base.stickyNote';

const claimProperties = new IdempotencyClaim().description.properties;

let server: PostgresServer;
let n8n: EditorN8n | undefined;
let editor: N8nEditor | undefined;

beforeAll(async () => {
	server = await startTestPostgres();
	n8n = await startEditorN8n(server.url);
	editor = await N8nEditor.open(n8n.n8n.baseUrl);
	await editor.signIn(OWNER.email, OWNER.password);
}, 15 * 60_000);

afterAll(async () => {
	await editor?.close();
	await n8n?.close();
	await server?.stop();
}, 120_000);

step(
	'the template opens on the canvas with every node, each of ours with its subtitle',
	async () => {
		await editor!.openWorkflow(n8n!.template.id);

		const expected = n8n!.template.nodes.filter((node) => node.type !== STICKY_NOTE);
		expect((await editor!.canvasNodeNames()).sort()).toEqual(
			expected.map((node) => node.name).sort(),
		);
		// Each subtitle names the option as the panel lists it (exactly, case too), not by its value.
		const subtitles = {
			[CLAIM_NODE]: 'Claim With Lease',
			[BUSINESS_WRITE]: 'Complete With Write',
			'Webhook Signature': 'Generic HMAC',
		};
		for (const [node, subtitle] of Object.entries(subtitles))
			await editor!.canvasNode(node).getByText(subtitle, { exact: true }).first().waitFor();
	},
);

step('the claim node panel renders Key Source, Claim Mode and Lease with their hints', async () => {
	const panel = await editor!.openNode(CLAIM_NODE);
	// Each parameter with its name and the template's choice as the editor shows it; under Key Source the
	// notice of the selected source, under the others their hint.
	const shown = {
		keySource: 'Event ID, Else Body Hash',
		claimMode: 'Claim With Lease',
		leaseSeconds: '300',
	};
	for (const [name, choice] of Object.entries(shown)) {
		const property = claimProperty(name);
		const input = panel.locator(`[data-test-id="parameter-input-${name}"]`);
		await input.waitFor();
		await expectVisibleText(panel, property.displayName);
		expect(await input.locator('input').inputValue()).toBe(choice);
	}
	await expectVisibleText(panel, claimProperty('eventIdKeyNotice').displayName);
	await expectVisibleText(panel, claimProperty('claimMode').hint!);
	await expectVisibleText(panel, claimProperty('leaseSeconds').hint!);
	await editor!.closeNode();
});

step(
	"a polled feed's claim node shows Remove Duplicates' Keep Items Where and Value to Dedupe On",
	async () => {
		await editor!.openWorkflow(n8n!.polledTemplate.id);
		const panel = await editor!.openNode(CLAIM_NODE);
		const shown = { keySource: 'Polled Item', keepItemsWhere: 'Value Is New' };
		for (const [name, choice] of Object.entries(shown)) {
			const input = panel.locator(`[data-test-id="parameter-input-${name}"]`);
			await input.waitFor();
			expect(await input.locator('input').inputValue()).toBe(choice);
		}
		// Value to Dedupe On holds an expression, under which n8n shows its value rather than a hint.
		await expectVisibleText(panel, claimProperty('keepItemsWhere').hint!);
		await expectVisibleText(panel, claimProperty('dedupeValue').displayName);
		await editor!.closeNode();
	},
);

step("the credential's test passes from the UI, on opening and again on Retry", async () => {
	const passed = { status: 'OK', message: expect.any(String) };
	const { dialog, firstTest } = await editor!.openCredential(n8n!.credentialName);
	expect(firstTest).toEqual(passed);
	await expectVisibleText(dialog, 'Connection tested successfully');

	expect(await editor!.retestCredential(dialog)).toEqual(passed);
	await expectVisibleText(dialog, 'Connection tested successfully');
	await editor!.closeCredential(dialog);
});

step('a repeated delivery shows as an execution that went down Duplicate', async () => {
	await editor!.openWorkflow(n8n!.template.id);
	const { answers, executions } = await n8n!.deliverTwice(`evt_editor_${Date.now()}`);
	expect(answers.map((answer) => answer.body.status)).toEqual(['processed', 'duplicate']);
	expect(executions[1].nodesRun).toContain(RESPOND_DUPLICATE);

	const label = await editor!.openExecution(n8n!.template.id, executions[1].id);
	await expectVisibleText(label, 'Succeeded');
	await editor!.executedNode(RESPOND_DUPLICATE).waitFor();
	expect(await editor!.executedNode(CLAIM_NODE).count()).toBe(1);
	expect(await editor!.executedNode(BUSINESS_WRITE).count()).toBe(0);
});

step("the README's import path: a new workflow's … menu → Import → From file", async () => {
	await editor!.importFromFile(join(REPO_ROOT, 'workflows', 'idempotency-claim-template.json'));
	const expected = n8n!.template.nodes.filter((node) => node.type !== STICKY_NOTE);
	expect((await editor!.canvasNodeNames()).sort()).toEqual(
		expected.map((node) => node.name).sort(),
	);
});

step('the HTTP step template imports through the same menu, every node on the canvas', async () => {
	const file = 'webhook-http-step-template.json';
	await editor!.importFromFile(join(REPO_ROOT, 'workflows', file));
	const expected = loadShippedWorkflow(file).nodes.filter((node) => node.type !== STICKY_NOTE);
	expect((await editor!.canvasNodeNames()).sort()).toEqual(
		expected.map((node) => node.name).sort(),
	);
});

step('the browser console reports no errors', async () => {
	expect(editor!.console.unexpected()).toEqual([]);
	// Of the known noise, only the missing output-schema preview may name this package's nodes.
	const aboutThisPackage = editor!.console.all.filter((problem) =>
		`${problem.text} ${problem.url}`.includes(PACKAGE_NAME),
	);
	expect(aboutThisPackage.map((problem) => knownNoise(problem)?.name)).toEqual(
		aboutThisPackage.map(() => 'output schema preview'),
	);
});

function claimProperty(name: string): INodeProperties {
	const property = claimProperties.find((candidate) => candidate.name === name);
	if (!property) throw new Error(`the claim node has no parameter ${name}`);
	return property;
}

/** Waits until `text` shows inside `scope` (n8n renders panels lazily). */
async function expectVisibleText(
	scope: ReturnType<N8nEditor['canvasNode']>,
	text: string,
): Promise<void> {
	await scope.getByText(text, { exact: false }).first().waitFor();
}

/** A test whose failure message ends with n8n's log tail. */
function step(name: string, body: () => Promise<void>): void {
	it(name, () => explainedByN8nLog(n8n?.n8n, body), 300_000);
}
