// Small statistics helpers for the benchmarks: latencies in milliseconds, ratios of side-by-side runs.

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted, p) {
	if (sorted.length === 0) return NaN;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values) {
	return percentile(
		[...values].sort((a, b) => a - b),
		50,
	);
}

export function mean(values) {
	return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** n, mean, p50, p95, p99 and max of latencies in ms. */
export function summarize(latenciesMs) {
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
export function elapsedMs(startedNs) {
	return Number(process.hrtime.bigint() - startedNs) / 1e6;
}

export async function timed(run) {
	const started = process.hrtime.bigint();
	const value = await run();
	return { ms: elapsedMs(started), value };
}

export const formatMs = (ms) => (ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0));
export const formatRatio = (ratio) => `${ratio.toFixed(2)}×`;
export const formatPercent = (fraction) => `${(fraction * 100).toFixed(1)} %`;
export const formatRate = (perSecond) =>
	perSecond >= 10_000 ? `${Math.round(perSecond / 1000)}k` : perSecond >= 100 ? `${Math.round(perSecond)}` : perSecond.toFixed(1);
export const formatMiB = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
