// The built package (dist/), loaded the way n8n loads it (CommonJS, compiled by tsc), plus the `pg`
// module instance it uses, so statements can be counted on it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import type { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import type * as ClaimSqlModule from '../../nodes/Idempotency/store/claimSql';
import type * as TableLayoutModule from '../../nodes/Idempotency/store/tableLayout';
import type * as TableRefModule from '../../nodes/Idempotency/store/tableRef';
import type * as TableSchemaModule from '../../nodes/Idempotency/store/tableSchema';
import type * as PoolRegistryModule from '../../nodes/Idempotency/transport/poolRegistry';
import { REPO_ROOT } from '../../harness/repo';

const DIST = join(REPO_ROOT, 'dist', 'nodes', 'Idempotency');

export interface Dist {
	IdempotencyClaim: typeof IdempotencyClaim;
	IdempotencyKey: typeof IdempotencyKey;
	poolRegistry: typeof PoolRegistryModule;
	claimSql: typeof ClaimSqlModule;
	tableSchema: typeof TableSchemaModule;
	tableLayout: typeof TableLayoutModule;
	tableRef: typeof TableRefModule.tableRef;
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
		poolRegistry: load('./transport/poolRegistry.js'),
		claimSql: load('./store/claimSql.js'),
		tableSchema: load('./store/tableSchema.js'),
		tableLayout: load('./store/tableLayout.js'),
		tableRef: load('./store/tableRef.js').tableRef,
		pg: load('pg'),
	};
}
