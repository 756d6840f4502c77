// Drives n8n 2.x's editor in headless Chromium through what a user clicks: sign in, open a workflow on the
// canvas, open a node's panel, open a credential (n8n tests it on opening) and test it again, look at a
// workflow's latest execution. Selectors are n8n's own data-test-id attributes, which its end-to-end tests use.
import type { Locator, Page } from 'playwright-core';

import { launchChromium, type HeadlessChromium } from './chromium';
import { ConsoleProblems } from './consoleProblems';

// Generous: on a busy 2-core machine n8n's editor bundle alone takes tens of seconds to load.
const STEP_TIMEOUT_MS = 180_000;
const RETRY_CLICK_WAIT_MS = 30_000;

const testId = (id: string) => `[data-test-id="${id}"]`;

export interface CredentialTestResult {
	/** n8n's verdict, from its POST /rest/credentials/test answer: 'OK' or 'Error'. */
	status: string;
	message: string;
}

export class N8nEditor {
	private constructor(
		readonly page: Page,
		readonly baseUrl: string,
		readonly console: ConsoleProblems,
		private readonly chromium: HeadlessChromium,
	) {}

	static async open(baseUrl: string): Promise<N8nEditor> {
		const chromium = await launchChromium();
		try {
			const page = await chromium.context.newPage();
			page.setDefaultTimeout(STEP_TIMEOUT_MS);
			page.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
			return new N8nEditor(page, baseUrl.replace(/\/$/, ''), new ConsoleProblems(page), chromium);
		} catch (error) {
			await chromium.close();
			throw error;
		}
	}

	async signIn(email: string, password: string): Promise<void> {
		await this.page.goto(`${this.baseUrl}/signin`);
		await this.page.locator('#emailOrLdapLoginId').fill(email);
		await this.page.locator('#password').fill(password);
		await this.page.keyboard.press('Enter');
		await this.page.waitForURL((url) => !url.pathname.startsWith('/signin'));
	}

	/** Opens a workflow on the canvas and closes what n8n lays over it for a new user. */
	async openWorkflow(workflowId: string): Promise<void> {
		await this.page.goto(`${this.baseUrl}/workflow/${workflowId}`);
		await this.page.locator(testId('canvas-node')).first().waitFor();
		await this.dismissOverlays();
		await this.page.locator(testId('zoom-to-fit')).click();
		await this.settle();
	}

	/**
	 * Imports a workflow file into a new workflow the way the README says: the workflow's "…" menu →
	 * Import → From file, and the file chosen in the browser's file dialog.
	 */
	async importFromFile(file: string): Promise<void> {
		await this.page.goto(`${this.baseUrl}/workflow/new`);
		await this.dismissOverlays();
		await this.page.locator(testId('workflow-menu')).click();
		await this.page.getByText('Import', { exact: true }).hover();
		const chooser = this.page.waitForEvent('filechooser');
		await this.page.getByText('From file', { exact: true }).click();
		await (await chooser).setFiles(file);
		await this.page.locator(testId('canvas-node')).first().waitFor();
		await this.settle();
	}

	canvasNode(name: string): Locator {
		return this.page.locator(`${testId('canvas-node')}[data-node-name="${name}"]`);
	}

	async canvasNodeNames(): Promise<string[]> {
		return this.page
			.locator(testId('canvas-node'))
			.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-node-name') ?? ''));
	}

	/** Opens a node's panel (double-click on the canvas) and returns it. */
	async openNode(name: string): Promise<Locator> {
		await this.canvasNode(name).dblclick();
		const panel = this.page.locator(testId('ndv'));
		await panel.locator(testId('node-parameters')).waitFor();
		await this.settle();
		return panel;
	}

	async closeNode(): Promise<void> {
		await this.page.locator(testId('ndv-close-button')).click();
		await this.page.locator(testId('ndv')).waitFor({ state: 'hidden' });
	}

	/**
	 * Opens one execution of a workflow on its canvas by its id: the latest one may be a run the workflow's
	 * Schedule Trigger started meanwhile.
	 */
	async openExecution(workflowId: string, executionId: number): Promise<Locator> {
		await this.page.goto(`${this.baseUrl}/workflow/${workflowId}/executions/${executionId}`);
		const label = this.page.locator(testId('execution-preview-label'));
		await label.waitFor();
		await this.page.locator(testId('canvas-node')).first().waitFor();
		await this.dismissOverlays();
		await this.settle();
		return label;
	}

	/** Whether the execution on screen ran a node (n8n marks it with a success check). */
	executedNode(name: string): Locator {
		return this.canvasNode(name).locator(testId('canvas-node-status-success'));
	}

	/**
	 * Opens a credential from the Credentials list. n8n tests a credential when its dialog opens; this waits
	 * for that test's answer and returns it with the dialog.
	 */
	async openCredential(
		name: string,
	): Promise<{ dialog: Locator; firstTest: CredentialTestResult }> {
		await this.page.goto(`${this.baseUrl}/home/credentials`);
		const answer = this.credentialTestAnswer();
		await this.page.locator(testId('resources-list-item')).filter({ hasText: name }).click();
		const dialog = this.page.locator(testId('editCredential-modal'));
		await dialog.waitFor();
		return { dialog, firstTest: await answer };
	}

	/**
	 * Clicks the credential dialog's Retry, which runs the credential's test again. On a loaded machine a click
	 * while the dialog still re-renders after its first test can send nothing (CI saw it once in many runs), so
	 * a Retry that sends no test within RETRY_CLICK_WAIT_MS is clicked once more; the answer must still be the
	 * one a Retry sent.
	 */
	async retestCredential(dialog: Locator): Promise<CredentialTestResult> {
		await this.settle();
		const retry = dialog.getByRole('button', { name: 'Retry' });
		for (let click = 1; ; click++) {
			const answer = this.credentialTestAnswer(click === 1 ? RETRY_CLICK_WAIT_MS : STEP_TIMEOUT_MS);
			await retry.click();
			try {
				return await answer;
			} catch (error) {
				if (click > 1) throw error;
				console.log(
					`Retry sent no credential test within ${RETRY_CLICK_WAIT_MS} ms; clicking it again`,
				);
			}
		}
	}

	async closeCredential(dialog: Locator): Promise<void> {
		await this.page.keyboard.press('Escape');
		await dialog.waitFor({ state: 'hidden' });
	}

	async screenshot(path: string, target?: Locator): Promise<void> {
		await this.settle();
		if (target) await target.screenshot({ path, animations: 'disabled' });
		else await this.page.screenshot({ path, animations: 'disabled' });
	}

	async close(): Promise<void> {
		await this.chromium.close();
	}

	private async credentialTestAnswer(timeout = STEP_TIMEOUT_MS): Promise<CredentialTestResult> {
		const response = await this.page.waitForResponse(
			(candidate) =>
				candidate.request().method() === 'POST' &&
				new URL(candidate.url()).pathname === '/rest/credentials/test',
			{ timeout },
		);
		const body = (await response.json()) as { data?: { status?: string; message?: string } };
		return {
			status: body.data?.status ?? `HTTP ${response.status()}`,
			message: body.data?.message ?? '',
		};
	}

	/** Closes the "Production Checklist" popover and any survey or onboarding dialog over the canvas. */
	private async dismissOverlays(): Promise<void> {
		const checklistClose = this.page.locator(testId('suggested-actions-close'));
		if (await checklistClose.isVisible()) await checklistClose.click();
		for (const dialog of ['nps-survey-modal']) {
			if (await this.page.locator(testId(dialog)).isVisible())
				await this.page.keyboard.press('Escape');
		}
	}

	/** Lets transitions and lazy rendering finish before a check or a picture. */
	private async settle(): Promise<void> {
		await this.page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined); // n8n's push connection may keep the network busy
		await this.page.waitForTimeout(500);
	}
}
