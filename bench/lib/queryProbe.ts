// Watches the statements sent to Postgres by wrapping pg's Client#query on the module instance the node
// uses (a pool checks out a Client and calls query on it once per statement): how many were sent, their
// text, and how long the process waited for their answers (the rest of an execution is JavaScript).
import type { Dist } from './dist';
import { elapsedMs } from './stats';

type Query = (this: unknown, config: unknown, values?: unknown, callback?: unknown) => unknown;
type Callback = (...answer: unknown[]) => void;

export interface ProbeReading {
	roundTrips: number;
	statements: string[];
	waitMs: number;
}

export function probeQueries(pg: Dist['pg']) {
	const prototype = pg.Client.prototype as unknown as { query: Query };
	const original = prototype.query;
	const probe = { statements: [] as string[], waitMs: 0 };
	prototype.query = function probedQuery(config, values, callback) {
		const text = config as string | { text?: string };
		probe.statements.push(typeof text === 'string' ? text : (text?.text ?? String(text)));
		const started = process.hrtime.bigint();
		const done = () => (probe.waitMs += elapsedMs(started));
		const timedCallback =
			(answered: Callback) =>
			(...answer: unknown[]) => {
				done();
				answered(...answer);
			};
		// pg-pool passes a callback; direct callers get a promise; a pg Query carries its own callback.
		const submitted = config as { submit?: unknown; callback?: unknown };
		if (typeof submitted.submit === 'function' && typeof submitted.callback === 'function')
			submitted.callback = timedCallback(submitted.callback as Callback);
		else if (typeof callback === 'function')
			return original.call(this, config, values, timedCallback(callback as Callback));
		if (typeof values === 'function')
			return original.call(this, config, timedCallback(values as Callback));
		const result = original.call(this, config, values) as Promise<unknown> | undefined;
		if (result && typeof result.then === 'function') result.then(done, done);
		return result;
	};
	return {
		/** Forget what was seen so far (keeps watching). */
		reset() {
			probe.statements = [];
			probe.waitMs = 0;
		},
		read: (): ProbeReading => ({
			roundTrips: probe.statements.length,
			statements: [...probe.statements],
			waitMs: probe.waitMs,
		}),
		stop() {
			prototype.query = original;
		},
	};
}

/** Runs `run` while watching; returns its value with the statements it sent. */
export async function countRoundTrips<T>(
	pg: Dist['pg'],
	run: () => Promise<T>,
): Promise<ProbeReading & { value: T }> {
	const probe = probeQueries(pg);
	try {
		const value = await run();
		return { value, ...probe.read() };
	} finally {
		probe.stop();
	}
}
