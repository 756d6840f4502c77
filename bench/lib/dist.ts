// The built package (dist/), loaded the way n8n loads it (CommonJS, compiled by tsc): its nodes, the one
// internal entry point for benchmarks (nodes/Idempotency/benchmarkEntry.ts), and the `pg` module instance
// the package uses (dist/node_modules/pg.js, bundled by scripts/bundlePg.ts), so statements can be
// counted on it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { IdempotencyBurst } from '../../nodes/Idempotency/IdempotencyBurst.node';
import type { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import type { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import type { IdempotencyStep } from '../../nodes/Idempotency/IdempotencyStep.node';
import type { IdempotencyLimit } from '../../nodes/Idempotency/IdempotencyLimit.node';
import type * as BenchmarkEntry from '../../nodes/Idempotency/benchmarkEntry';
import { REPO_ROOT } from '../../harness/repo';

const DIST = join(REPO_ROOT, 'dist', 'nodes', 'Idempotency');

export interface Dist {
	IdempotencyClaim: typeof IdempotencyClaim;
	IdempotencyKey: typeof IdempotencyKey;
	IdempotencyBurst: typeof IdempotencyBurst;
	IdempotencyStep: typeof IdempotencyStep;
	IdempotencyLimit: typeof IdempotencyLimit;
	internals: typeof BenchmarkEntry;
	pg: typeof import('pg');
}

export function loadDist(): Dist {
	const entry = join(DIST, 'IdempotencyClaim.node.js');
	if (!existsSync(entry)) {
		throw new Error(`${entry} is missing: run \`npm run build\` (npm run bench does)`);
	}
	const load = createRequire(entry);
	return {
		IdempotencyClaim: load('./IdempotencyClaim.node.js').IdempotencyClaim,
		IdempotencyKey: load('./IdempotencyKey.node.js').IdempotencyKey,
		IdempotencyBurst: load('./IdempotencyBurst.node.js').IdempotencyBurst,
		IdempotencyStep: load('./IdempotencyStep.node.js').IdempotencyStep,
		IdempotencyLimit: load('./IdempotencyLimit.node.js').IdempotencyLimit,
		internals: load('./benchmarkEntry.js'),
		pg: load('pg'),
	};
}
