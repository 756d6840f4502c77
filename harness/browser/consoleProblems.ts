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
	name: string;
	why: string;
	matches(problem: ConsoleProblem): boolean;
}

export const N8N_EDITOR_NOISE: KnownNoise[] = [
	{
		name: 'sign-in probe',
		why: 'before sign-in the editor asks GET /rest/login whether a session exists; the answer is 401',
		matches: (problem) =>
			problem.kind === 'console.error' &&
			/status of 401 \(Unauthorized\)/.test(problem.text) &&
			new URL(problem.url || 'http://x/').pathname === '/rest/login',
	},
	{
		name: 'output schema preview',
		why:
			"a node's panel asks GET /schemas/<node type>/<version>.json for an optional preview of the " +
			"parent node's output; a node without an __schema__/v<version>.json file beside it (this " +
			"package's nodes ship none yet) gets 404, and the panel simply shows no preview",
		matches: (problem) =>
			problem.kind === 'console.error' &&
			/status of 404 \(Not Found\)/.test(problem.text) &&
			/^\/schemas\/[^/]+\/\d+\.\d+\.\d+(\/[^/]+){0,2}\.json$/.test(
				new URL(problem.url || 'http://x/').pathname,
			),
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
		return this.all.filter((problem) => !knownNoise(problem));
	}
}

/** The known n8n noise a problem is, if any. */
export function knownNoise(problem: ConsoleProblem): KnownNoise | undefined {
	return N8N_EDITOR_NOISE.find((noise) => noise.matches(problem));
}
