// What the editor's browser console reported: every error message and uncaught page error, minus the few
// that n8n's own editor produces on every page load, whatever nodes are installed. Each ignored message is
// matched narrowly and says why, so an error from this package's nodes or credentials is never hidden.
import type { ConsoleMessage, Page } from 'playwright-core';

export interface ConsoleProblem {
	kind: 'console.error' | 'pageerror';
	text: string;
	/** The page or resource URL the browser attributes it to. */
	url: string;
}

interface KnownNoise {
	why: string;
	matches(problem: ConsoleProblem): boolean;
}

export const N8N_EDITOR_NOISE: KnownNoise[] = [
	{
		why: 'before sign-in the editor asks GET /rest/login whether a session exists; the answer is 401',
		matches: (problem) =>
			problem.kind === 'console.error' &&
			/status of 401 \(Unauthorized\)/.test(problem.text) &&
			new URL(problem.url || 'http://x/').pathname === '/rest/login',
	},
];

export class ConsoleProblems {
	readonly all: ConsoleProblem[] = [];

	constructor(page: Page) {
		page.on('console', (message: ConsoleMessage) => {
			if (message.type() !== 'error') return;
			this.all.push({ kind: 'console.error', text: message.text(), url: message.location().url });
		});
		page.on('pageerror', (error) => {
			this.all.push({ kind: 'pageerror', text: error.stack ?? error.message, url: page.url() });
		});
	}

	/** Everything that is not known n8n noise. */
	unexpected(): ConsoleProblem[] {
		return this.all.filter((problem) => !N8N_EDITOR_NOISE.some((noise) => noise.matches(problem)));
	}
}
