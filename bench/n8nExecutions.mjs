// Reads n8n's own execution records (when n8n keeps them in the benchmark Postgres) to show where the time
// of a workflow goes: mean time per node as n8n measured it, and mean execution time start to stop.
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** @returns {(workflowId: string, limit?: number) => Promise<{ executions: number, meanMs: number, nodes: Array<{ name: string, meanMs: number }> }>} */
export function executionTimingsReader(pool, schema, n8nDir) {
	// n8n stores run data serialized with `flatted`; use n8n's own copy to read it back.
	const { parse } = createRequire(join(n8nDir, 'node_modules', 'n8n', 'package.json'))('flatted');
	return async (workflowId, limit = 300) => {
		const { rows } = await pool.query(
			`SELECT d.data, extract(epoch FROM (e."stoppedAt" - e."startedAt")) * 1000 AS ms
			 FROM ${schema}.execution_entity e JOIN ${schema}.execution_data d ON d."executionId" = e.id
			 WHERE e."workflowId" = $1 AND e.status = 'success' ORDER BY e.id DESC LIMIT $2`,
			[workflowId, limit],
		);
		const perNode = new Map();
		let total = 0;
		for (const row of rows) {
			total += Number(row.ms);
			const runData = parse(row.data)?.resultData?.runData ?? {};
			for (const [name, runs] of Object.entries(runData)) {
				const ms = runs.reduce((sum, run) => sum + (run.executionTime ?? 0), 0);
				const entry = perNode.get(name) ?? { ms: 0, count: 0 };
				entry.ms += ms;
				entry.count += 1;
				perNode.set(name, entry);
			}
		}
		return {
			executions: rows.length,
			meanMs: rows.length ? total / rows.length : NaN,
			nodes: [...perNode].map(([name, entry]) => ({ name, meanMs: entry.ms / entry.count })),
		};
	};
}
