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

	private async nodesRun(executionId: number): Promise<string[]> {
		const { rows } = await this.pool.query(`SELECT data FROM ${this.schema}.execution_data WHERE "executionId" = $1`, [
			executionId,
		]);
		if (rows.length === 0) return [];
		const data = parseFlatted(rows[0].data) as { resultData?: { runData?: Record<string, unknown> } };
		return Object.keys(data.resultData?.runData ?? {});
	}
}
