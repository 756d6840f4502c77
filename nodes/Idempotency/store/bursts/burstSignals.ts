/**
 * In-process wake-ups for holders: when an item collected in this process fills a burst, its holder (if
 * it waits in this process) looks at once instead of at its next look. It only shortens a wait; a
 * holder in another process sees a full burst at its next look.
 */
const waiting = new Map<string, () => void>();

/** Resolves when `burstId` of this table fills up in this process; `cancel` forgets it. */
export function fillSignal(
	table: string,
	burstId: string,
): { filled: Promise<void>; cancel: () => void } {
	const slot = `${table}\u0000${burstId}`;
	const filled = new Promise<void>((resolve) => waiting.set(slot, resolve));
	return { filled, cancel: () => waiting.delete(slot) };
}

export function signalFilled(table: string, burstId: string): void {
	waiting.get(`${table}\u0000${burstId}`)?.();
}
