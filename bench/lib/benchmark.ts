// What every benchmark receives and returns (run.ts runs them in one process, side by side).
import type { Pool } from 'pg';

import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import type { Dist } from './dist';
import type { BenchN8n } from './benchN8n';
import { formatRatio } from './stats';

export interface BenchContext {
	dist: Dist;
	url: string;
	credentials: PostgresCredentials;
	pool: Pool;
	quick: boolean;
	log(message: string): void;
	/** Records a violated correctness assertion (the run then exits non-zero); returns the condition. */
	check(condition: boolean, message: string): boolean;
	/** The shared n8n instance, for the benchmarks that run in n8n. */
	n8n?: BenchN8n;
}

export interface BenchRow {
	measure: string;
	value: string;
	target?: string;
	met?: boolean;
}

/** A row whose value is a ratio held to a bound (at most `max`×, at least `min`×), or only reported. */
export function ratioRow(
	measure: string,
	ratio: number,
	{ max, min }: { max?: number; min?: number } = {},
): BenchRow {
	const target = max !== undefined ? `≤ ${max}×` : min !== undefined ? `≥ ${min}×` : 'reported';
	const met = max !== undefined ? ratio <= max : min !== undefined ? ratio >= min : undefined;
	return { measure, value: formatRatio(ratio), target, met };
}

/** A row with no target to meet: what it says is reported (or asserted elsewhere, as `target` says). */
export const reportedRow = (measure: string, value: string, target = 'reported'): BenchRow => ({
	measure,
	value,
	target,
});

export interface BenchResult {
	title: string;
	rows?: BenchRow[];
	details?: string;
	skipped?: string;
	error?: Error;
}

export type Benchmark = (context: BenchContext) => Promise<Omit<BenchResult, 'title'>>;

/** What a file in bench/suites/ exports: its title in the report, numbered as its section, and its run. */
export interface Suite {
	title: string;
	run: Benchmark & { inN8n?: true };
}

/** A benchmark in the shared n8n: run.ts starts n8n before the first such run and passes it in. */
export const inN8n = (
	bench: (context: BenchContext & { n8n: BenchN8n }) => ReturnType<Benchmark>,
): Suite['run'] =>
	Object.assign((context: BenchContext) => bench({ ...context, n8n: context.n8n! }), {
		inN8n: true as const,
	});
