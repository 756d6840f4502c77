/** Polls `check` every 50 ms until it holds. */
export async function waitFor(
	check: () => Promise<boolean>,
	timeoutMs: number,
	what = 'the condition',
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}
