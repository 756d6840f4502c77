import type { Pool } from 'pg';

import { parseFlatted } from './flatted';

export interface Execution {
	id: number;
	status: string;
	mode: string;
	/** Names of the nodes that ran, from n8n's saved run data. */
	nodesRun: string[];
}

/**
 * Reads n8n's own database (execution_entity, execution_data) in the schema n8n was configured with:
 * counting executions needs no API key this way, and the run data shows which branch each took.
 */
export class N8nExecutions {
	constructor(
		private readonly pool: Pool,
		private readonly schema: string,
	) {}

	/** Highest execution id so far (0 when none): a checkpoint for "executions since". */
	async lastId(): Promise<number> {
		const { rows } = await this.pool.query(`SELECT coalesce(max(id), 0)::int AS id FROM ${this.schema}.execution_entity`);
		return rows[0].id;
	}

	/**
	 * Waits until the workflow has exactly `count` executions after `afterId` and none is still running
	 * (n8n answers the webhook before it saves the execution), then returns them in order.
	 */
	async waitForFinished(workflowId: string, afterId: number, count: number, timeoutMs = 30_000): Promise<Execution[]> {
		const deadline = Date.now() + timeoutMs;
		let rows: Array<{ id: number; status: string; mode: string; finished: boolean }> = [];
		while (Date.now() < deadline) {
			({ rows } = await this.pool.query(
				`SELECT id, status, mode, finished FROM ${this.schema}.execution_entity
				 WHERE "workflowId" = $1 AND id > $2 ORDER BY id`,
				[workflowId, afterId],
			));
			const settled = rows.every((row) => !['new', 'running', 'waiting'].includes(row.status));
			if (rows.length >= count && settled) break;
			await new Promise((resolve) => setTimeout(resolve, 200));
		}
		const executions: Execution[] = [];
		for (const row of rows) executions.push({ id: row.id, status: row.status, mode: row.mode, nodesRun: await this.nodesRun(row.id) });
		return executions;
	}

	/**
	 * Executions of the workflow after `afterId` by status, once none is still running and the count has
	 * stayed the same for a second (for figures after a load run, where reading every run's data is too slow).
	 */
	async settledStatusCounts(workflowId: string, afterId: number, timeoutMs = 60_000): Promise<Record<string, number>> {
		const deadline = Date.now() + timeoutMs;
		let counts: Record<string, number> = {};
		let previousTotal = -1;
		while (Date.now() < deadline) {
			const { rows } = await this.pool.query<{ status: string; n: number }>(
				`SELECT status, count(*)::int AS n FROM ${this.schema}.execution_entity
				 WHERE "workflowId" = $1 AND id > $2 GROUP BY status ORDER BY status`,
				[workflowId, afterId],
			);
			counts = Object.fromEntries(rows.map((row) => [row.status, row.n]));
			const total = rows.reduce((sum, row) => sum + row.n, 0);
			const settled = !['new', 'running', 'waiting'].some((status) => counts[status]);
			if (settled && total === previousTotal) break;
			previousTotal = total;
			await new Promise((resolve) => setTimeout(resolve, 1_000));
		}
		return counts;
	}

	/** The failed executions after `afterId` (at most `limit`): where and why each stopped, from its run data. */
	async failures(
		workflowId: string,
		afterId: number,
		limit = 10,
	): Promise<Array<{ id: number; lastNode: string | null; error: string | null }>> {
		const { rows } = await this.pool.query<{ id: number; data: string | null }>(
			`SELECT e.id, d.data FROM ${this.schema}.execution_entity e
			 LEFT JOIN ${this.schema}.execution_data d ON d."executionId" = e.id
			 WHERE e."workflowId" = $1 AND e.id > $2 AND e.status IN ('error', 'crashed') ORDER BY e.id LIMIT $3`,
			[workflowId, afterId, limit],
		);
		return rows.map((row) => {
			const data = row.data
				? (parseFlatted(row.data) as { resultData?: { lastNodeExecuted?: string; error?: { message?: string } } })
				: {};
			return { id: row.id, lastNode: data.resultData?.lastNodeExecuted ?? null, error: data.resultData?.error?.message ?? null };
		});
	}

	private async nodesRun(executionId: number): Promise<string[]> {
		const { rows } = await this.pool.query(`SELECT data FROM ${this.schema}.execution_data WHERE "executionId" = $1`, [
			executionId,
		]);
		if (rows.length === 0) return [];
		const data = parseFlatted(rows[0].data) as { resultData?: { runData?: Record<string, unknown> } };
		return Object.keys(data.resultData?.runData ?? {});
	}
}
