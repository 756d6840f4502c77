// Small statistics helpers for the benchmarks: latencies in milliseconds, ratios of side-by-side runs.

/** Nearest-rank percentile of an ascending array (p in 0..100). */
function percentile(sorted: number[], p: number): number {
	if (sorted.length === 0) return NaN;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: number[]): number {
	return percentile(
		[...values].sort((a, b) => a - b),
		50,
	);
}

export function mean(values: number[]): number {
	return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** n, mean, p50, p95, p99 and max of latencies in ms. */
export interface Summary {
	n: number;
	mean: number;
	p50: number;
	p95: number;
	p99: number;
	max: number;
}

export function summarize(latenciesMs: number[]): Summary {
	const sorted = [...latenciesMs].sort((a, b) => a - b);
	return {
		n: sorted.length,
		mean: mean(sorted),
		p50: percentile(sorted, 50),
		p95: percentile(sorted, 95),
		p99: percentile(sorted, 99),
		max: sorted[sorted.length - 1],
	};
}

/** Milliseconds since a process.hrtime.bigint() reading. */
export function elapsedMs(startedNs: bigint): number {
	return Number(process.hrtime.bigint() - startedNs) / 1e6;
}

export async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
	const started = process.hrtime.bigint();
	const value = await run();
	return { ms: elapsedMs(started), value };
}

export const formatMs = (ms: number): string =>
	ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0);
export const formatRatio = (ratio: number): string => `${ratio.toFixed(2)}×`;
export const formatPercent = (fraction: number): string => `${(fraction * 100).toFixed(1)} %`;
export const formatRate = (perSecond: number): string =>
	perSecond >= 10_000
		? `${Math.round(perSecond / 1000)}k`
		: perSecond >= 100
			? `${Math.round(perSecond)}`
			: perSecond.toFixed(1);
export const formatMiB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
