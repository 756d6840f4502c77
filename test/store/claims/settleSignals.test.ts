/** The in-process wake-ups of repeats waiting on a claim: who is woken, and who is not. */
import { settleSignal, signalSettled } from '../../../nodes/Idempotency/store/claims/settleSignals';

/** Whether the promise has settled by the time the queued callbacks have run. */
async function woken(promise: Promise<void>): Promise<boolean> {
	let done = false;
	void promise.then(() => (done = true));
	await new Promise((resolve) => setImmediate(resolve));
	return done;
}

describe('settleSignal and signalSettled', () => {
	it('wakes a waiter when one of its keys is settled in its table', async () => {
		const signal = settleSignal('"public"."t1"', ['a', 'b']);
		signalSettled('"public"."t1"', ['b']);
		expect(await woken(signal.settled)).toBe(true);
		signal.cancel();
	});

	it('does not wake a waiter for another key, nor for the same key in another table', async () => {
		const signal = settleSignal('"public"."t2"', ['a']);
		signalSettled('"public"."t2"', ['z']);
		signalSettled('"public"."other"', ['a']);
		expect(await woken(signal.settled)).toBe(false);
		signal.cancel();
	});

	it('a cancelled waiter is not woken, and the others of its key still are', async () => {
		const gone = settleSignal('"public"."t3"', ['a']);
		const staying = settleSignal('"public"."t3"', ['a']);
		gone.cancel();
		signalSettled('"public"."t3"', ['a']);
		expect(await woken(gone.settled)).toBe(false);
		expect(await woken(staying.settled)).toBe(true);
		staying.cancel();
	});

	it('settling keys nobody waits for does nothing', () => {
		expect(() => signalSettled('"public"."t4"', ['a', 'b'])).not.toThrow();
	});
});
