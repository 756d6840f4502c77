import {
	startAppWithN8n,
	type AppWithN8n,
	type AppWithN8nOptions,
	type N8nRunner,
} from '../../harness/stack';
import type { N8nInstance } from '../../harness/n8n/instance';

/** Installing n8n on a cold cache takes minutes; stopping takes seconds. */
const START_TIMEOUT_MS = 15 * 60_000;
const CLOSE_TIMEOUT_MS = 120_000;

/**
 * Starts the app database and n8n before a suite's tests and closes them after, handing the started
 * parts to the suite (which keeps what it uses in its own variables). Options that need something
 * started first (a server whose URL the workflows hold, the owner's password hash) come from a function.
 */
export function appWithN8nForSuite<Runner extends N8nRunner = N8nInstance>(
	options: AppWithN8nOptions<Runner> | (() => Promise<AppWithN8nOptions<Runner>>),
	onStarted: (started: AppWithN8n<Runner>) => void,
): void {
	let started: AppWithN8n<Runner> | undefined;
	beforeAll(async () => {
		started = await startAppWithN8n(typeof options === 'function' ? await options() : options);
		onStarted(started);
	}, START_TIMEOUT_MS);
	afterAll(() => started?.close(), CLOSE_TIMEOUT_MS);
}
