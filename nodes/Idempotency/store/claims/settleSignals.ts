/**
 * In-process wake-ups for whoever waits on rows of a table: repeats waiting on a claim (when this process
 * completes or releases keys) and a burst's holder (when an item collected in this process fills its
 * burst, keyed by the burst's ID in the bursts table). The waiter looks at the table at once instead of at
 * its next scheduled look. It only shortens a wait: waiters in other processes (queue-mode workers), and
 * takeovers after an expired lease, are seen by the looks themselves. Keyed by table name and key; a
 * wake-up for another database's table of the same name costs one extra look.
 */
const waiters = new Map<string, Set<() => void>>();

const slot = (qualified: string, key: string) => `${qualified}\u0000${key}`;

export interface SettleSignal {
	/** Resolves when one of the keys is completed or released by this process. */
	settled: Promise<void>;
	cancel(): void;
}

export function settleSignal(qualified: string, keys: string[]): SettleSignal {
	let wake = () => {};
	const settled = new Promise<void>((resolve) => (wake = resolve));
	const slots = keys.map((key) => slot(qualified, key));
	const cancel = () => {
		for (const name of slots) {
			const set = waiters.get(name);
			set?.delete(wake);
			if (set?.size === 0) waiters.delete(name);
		}
	};
	for (const name of slots) {
		let set = waiters.get(name);
		if (!set) waiters.set(name, (set = new Set()));
		set.add(wake);
	}
	return { settled, cancel };
}

/** Wakes this process's waiters for these keys (after the statement that settled them committed). */
export function signalSettled(qualified: string, keys: string[]): void {
	if (waiters.size === 0) return;
	for (const key of keys) for (const wake of waiters.get(slot(qualified, key)) ?? []) wake();
}

/** Waits `ms` (with `sleep`), or less when this process settles one of the keys meanwhile. */
export async function pauseUnlessSettled(
	qualified: string,
	keys: string[],
	ms: number,
	sleep: (ms: number) => Promise<void>,
): Promise<void> {
	const signal = settleSignal(qualified, keys);
	try {
		await Promise.race([sleep(ms), signal.settled]);
	} finally {
		signal.cancel();
	}
}
