/**
 * This process's clock, for what the node times itself: how long to wait, when to look again, when a
 * cached picture is old, how recent a signature is. What a claim records (first_seen, a lease's end, a
 * dead letter's time) is never read from here but from the database's now(): workers' clocks differ.
 * One object, so a test can take its methods over (jest.spyOn) and move this time without waiting.
 */
export const processClock = {
	/** Milliseconds since the epoch, as Date.now(). */
	nowMs(): number {
		return Date.now();
	},
	/** Resolves after `ms` milliseconds. */
	sleep(ms: number): Promise<void> {
		return new Promise((resolve) => setTimeout(resolve, ms));
	},
};
