// Side-by-side measurement: every side runs once per round and the order is rotated each round (with two
// sides: alternated), so drift on a shared machine (load from elsewhere, checkpoints) hits all sides alike.

/** Runs every side once, in the order of round `round`; returns what each gave, in `sides` order. */
export async function inRotatedOrder<S, T>(
	round: number,
	sides: readonly S[],
	run: (side: S, round: number) => Promise<T>,
): Promise<T[]> {
	const values: T[] = new Array(sides.length);
	for (let i = 0; i < sides.length; i++) {
		const index = (i + round) % sides.length;
		values[index] = await run(sides[index], round);
	}
	return values;
}

/** `rounds` rounds of inRotatedOrder; returns, per round, what each side gave. */
export async function rotatedRounds<S, T>(
	rounds: number,
	sides: readonly S[],
	run: (side: S, round: number) => Promise<T>,
): Promise<T[][]> {
	const perRound: T[][] = [];
	for (let round = 0; round < rounds; round++)
		perRound.push(await inRotatedOrder(round, sides, run));
	return perRound;
}
