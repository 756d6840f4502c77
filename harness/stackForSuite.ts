import { startStack, type N8nRunner, type Stack, type StackOptions } from './stack';
import type { N8nInstance } from './n8n/instance';

/** Installing n8n on a cold cache takes minutes; stopping takes seconds. */
const START_TIMEOUT_MS = 15 * 60_000;
const CLOSE_TIMEOUT_MS = 120_000;

/**
 * Starts the stack (harness/stack.ts) before a suite's tests and closes it after, handing the started
 * parts to the suite (which keeps what it uses in its own variables). Options that need something
 * started first (a server whose URL the workflows hold, the owner's password hash) come from a function.
 */
export function stackForSuite<Runner extends N8nRunner = N8nInstance>(
	options: StackOptions<Runner> | (() => Promise<StackOptions<Runner>>),
	onStarted: (started: Stack<Runner>) => void,
): void {
	let started: Stack<Runner> | undefined;
	beforeAll(async () => {
		started = await startStack(typeof options === 'function' ? await options() : options);
		onStarted(started);
	}, START_TIMEOUT_MS);
	afterAll(() => started?.close(), CLOSE_TIMEOUT_MS);
}
