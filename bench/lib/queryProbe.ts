// Counts the statements sent to Postgres by wrapping pg's Client#query on the module instance the node
// uses (a pool checks out a Client and calls query on it once per statement), keeping their text.
import type { Dist } from './dist';

/** Runs `run` while watching; returns its value with the statements it sent. */
export async function countRoundTrips<T>(
	pg: Dist['pg'],
	run: () => Promise<T>,
): Promise<{ value: T; roundTrips: number; statements: string[] }> {
	const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
	const original = prototype.query;
	const statements: string[] = [];
	prototype.query = function probedQuery(config, ...rest) {
		const text = config as string | { text?: string };
		statements.push(typeof text === 'string' ? text : (text?.text ?? String(text)));
		return original.call(this, config, ...rest);
	};
	try {
		const value = await run();
		return { value, roundTrips: statements.length, statements };
	} finally {
		prototype.query = original;
	}
}
