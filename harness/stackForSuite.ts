import type { N8nInstance } from './n8n/instance';
import { OwnPostgres } from './postgres/server';
import { startStack, type N8nRunner, type Stack, type StackOptions } from './stack';

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

/** A suite's stack whose workflows' tables live on a server of the suite's own. */
export interface StackOnOwnAppServer {
	/** The workflows' server, for faults of the suite's own (started before the suite's tests). */
	appServer(): OwnPostgres;
}

/**
 * stackForSuite with the workflows' tables on a Postgres server of the suite's own, so that restarting it
 * leaves n8n's own database up. The suite's pool (the app database's admin) outlives the restart or
 * outage that ends its idle connections: the pool replaces them.
 */
export function stackOnOwnAppServerForSuite<Runner extends N8nRunner = N8nInstance>(
	options: Omit<StackOptions<Runner>, 'appServerUrl'>,
	onStarted: (started: Stack<Runner>) => void,
): StackOnOwnAppServer {
	let appServer: OwnPostgres | undefined;
	stackForSuite(
		async () => {
			appServer = await OwnPostgres.start();
			return { ...options, appServerUrl: appServer.url };
		},
		(started) => {
			started.pool.on('error', () => undefined);
			onStarted(started);
		},
	);
	afterAll(() => appServer?.stop(), CLOSE_TIMEOUT_MS);
	return {
		appServer: () => appServer!,
	};
}
