// Watches the statements sent to Postgres by wrapping pg's Client#query on the module instance the node
// uses (a pool checks out a Client and calls query on it once per statement): how many were sent, their
// text, and how long the process waited for their answers (the rest of an execution is JavaScript).
import { elapsedMs } from './stats.mjs';

export function probeQueries(pg) {
	const prototype = pg.Client.prototype;
	const original = prototype.query;
	const probe = { statements: [], waitMs: 0 };
	prototype.query = function probedQuery(config, values, callback) {
		probe.statements.push(typeof config === 'string' ? config : (config?.text ?? String(config)));
		const started = process.hrtime.bigint();
		const done = () => (probe.waitMs += elapsedMs(started));
		// pg-pool passes a callback; direct callers get a promise.
		if (typeof callback === 'function') {
			return original.call(this, config, values, (...answer) => (done(), callback(...answer)));
		}
		if (typeof values === 'function') {
			return original.call(this, config, (...answer) => (done(), values(...answer)));
		}
		const result = original.call(this, config, values);
		if (result && typeof result.then === 'function') result.then(done, done);
		return result;
	};
	return {
		/** Forget what was seen so far (keeps watching). */
		reset() {
			probe.statements = [];
			probe.waitMs = 0;
		},
		read: () => ({ roundTrips: probe.statements.length, statements: [...probe.statements], waitMs: probe.waitMs }),
		stop() {
			prototype.query = original;
		},
	};
}

/** Runs `run` while watching; returns its value with the statements it sent. */
export async function countRoundTrips(pg, run) {
	const probe = probeQueries(pg);
	try {
		const value = await run();
		return { value, ...probe.read() };
	} finally {
		probe.stop();
	}
}
