// The built package (dist/), loaded the way n8n loads it (CommonJS), plus the `pg` module instance it uses.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../dist/nodes/Idempotency/', import.meta.url));

export function loadDist() {
	if (!existsSync(`${DIST}IdempotencyClaim.node.js`)) {
		throw new Error(`${DIST}IdempotencyClaim.node.js is missing: run \`npm run build\` (npm run bench does)`);
	}
	const require = createRequire(`${DIST}IdempotencyClaim.node.js`);
	return {
		IdempotencyClaim: require('./IdempotencyClaim.node.js').IdempotencyClaim,
		IdempotencyKey: require('./IdempotencyKey.node.js').IdempotencyKey,
		poolRegistry: require('./transport/poolRegistry.js'),
		tableSchema: require('./store/tableSchema.js'),
		tableRef: require('./store/tableRef.js').tableRef,
		// The same module instance the node's pool uses, so round trips can be counted on it.
		pg: require('pg'),
	};
}
