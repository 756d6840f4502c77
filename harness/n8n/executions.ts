import type { Pool } from 'pg';

import { parseFlatted } from './flatted';

/** Statuses of an execution n8n has not finished (it answers a webhook before it saves the outcome). */
const UNFINISHED = ['new', 'running', 'waiting'];

/**
 * How an execution started, as n8n records it: a webhook delivery, or a trigger (a schedule). A template
 * whose Schedule Trigger retries kept events runs both; a test of its deliveries counts only theirs.
 */
export type ExecutionMode = 'webhook' | 'trigger';

export interface Execution {
	id: number;
	status: string;
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
		const { rows } = await this.pool.query(
			`SELECT coalesce(max(id), 0)::int AS id FROM ${this.schema}.execution_entity`,
		);
		return rows[0].id;
	}

	/** Executions of these workflows after `afterId` that n8n has not finished (new, running, waiting). */
	async unfinished(workflowIds: string[], afterId: number): Promise<number> {
		const { rows } = await this.pool.query(
			`SELECT count(*)::int AS n FROM ${this.schema}.execution_entity
			 WHERE "workflowId" = ANY($1) AND id > $2 AND status = ANY($3)`,
			[workflowIds, afterId, UNFINISHED],
		);
		return rows[0].n;
	}

	/** How many of these executions n8n has not finished (new, running, waiting). */
	async unfinishedAmong(ids: number[]): Promise<number> {
		const { rows } = await this.pool.query(
			`SELECT count(*)::int AS n FROM ${this.schema}.execution_entity WHERE id = ANY($1) AND status = ANY($2)`,
			[ids, UNFINISHED],
		);
		return rows[0].n;
	}

	/**
	 * Waits until the workflow has exactly `count` executions after `afterId` and none is still running
	 * (n8n answers the webhook before it saves the execution), then returns them in order. With `mode`, only
	 * the executions started that way count.
	 */
	async waitForFinished(
		workflowId: string,
		afterId: number,
		count: number,
		timeoutMs = 30_000,
		mode?: ExecutionMode,
	): Promise<Execution[]> {
		const deadline = Date.now() + timeoutMs;
		let rows: Array<{ id: number; status: string }> = [];
		while (Date.now() < deadline) {
			({ rows } = await this.pool.query(
				`SELECT id, status FROM ${this.schema}.execution_entity
				 WHERE "workflowId" = $1 AND id > $2 AND ($3::text IS NULL OR mode = $3) ORDER BY id`,
				[workflowId, afterId, mode ?? null],
			));
			const settled = rows.every((row) => !UNFINISHED.includes(row.status));
			if (rows.length >= count && settled) break;
			await new Promise((resolve) => setTimeout(resolve, 200));
		}
		return Promise.all(
			rows.map(async ({ id, status }) => ({ id, status, nodesRun: await this.nodesRun(id) })),
		);
	}

	/**
	 * Executions of the workflow after `afterId` by status, once none is still running and the count has
	 * stayed the same for a second (for figures after a load run, where reading every run's data is too slow).
	 * With `mode`, only the executions started that way are counted.
	 */
	async settledStatusCounts(
		workflowId: string,
		afterId: number,
		timeoutMs = 60_000,
		mode?: ExecutionMode,
	): Promise<Record<string, number>> {
		const deadline = Date.now() + timeoutMs;
		let counts: Record<string, number> = {};
		let previousTotal = -1;
		while (Date.now() < deadline) {
			const { rows } = await this.pool.query<{ status: string; n: number }>(
				`SELECT status, count(*)::int AS n FROM ${this.schema}.execution_entity
				 WHERE "workflowId" = $1 AND id > $2 AND ($3::text IS NULL OR mode = $3)
				 GROUP BY status ORDER BY status`,
				[workflowId, afterId, mode ?? null],
			);
			counts = Object.fromEntries(rows.map((row) => [row.status, row.n]));
			const total = rows.reduce((sum, row) => sum + row.n, 0);
			const settled = !UNFINISHED.some((status) => counts[status]);
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
				? (parseFlatted(row.data) as {
						resultData?: { lastNodeExecuted?: string; error?: { message?: string } };
					})
				: {};
			return {
				id: row.id,
				lastNode: data.resultData?.lastNodeExecuted ?? null,
				error: data.resultData?.error?.message ?? null,
			};
		});
	}

	/**
	 * Where the time of the workflow's last successful executions went: mean time per node as n8n measured
	 * it, and the mean execution time from start to stop.
	 */
	async timings(
		workflowId: string,
		limit = 300,
	): Promise<{
		executions: number;
		meanMs: number;
		nodes: Array<{ name: string; meanMs: number }>;
	}> {
		const { rows } = await this.pool.query<{ data: string; ms: string }>(
			`SELECT d.data, extract(epoch FROM (e."stoppedAt" - e."startedAt")) * 1000 AS ms
			 FROM ${this.schema}.execution_entity e JOIN ${this.schema}.execution_data d ON d."executionId" = e.id
			 WHERE e."workflowId" = $1 AND e.status = 'success' ORDER BY e.id DESC LIMIT $2`,
			[workflowId, limit],
		);
		const perNode = new Map<string, { ms: number; count: number }>();
		let total = 0;
		for (const row of rows) {
			total += Number(row.ms);
			for (const [name, runs] of Object.entries(runDataOf(row.data))) {
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
	}

	/**
	 * When each node of the workflow's finished executions after `afterId` finished (ms since the epoch,
	 * n8n's own clock: the node's start plus its execution time), by execution, in id order.
	 */
	async nodeEndTimes(
		workflowId: string,
		afterId: number,
	): Promise<Array<{ id: number; status: string; ends: Record<string, number> }>> {
		const { rows } = await this.pool.query<{ id: number; status: string; data: string }>(
			`SELECT e.id, e.status, d.data FROM ${this.schema}.execution_entity e
			 JOIN ${this.schema}.execution_data d ON d."executionId" = e.id
			 WHERE e."workflowId" = $1 AND e.id > $2 AND e.status <> ALL($3)
			 ORDER BY e.id`,
			[workflowId, afterId, UNFINISHED],
		);
		return rows.map((row) => ({
			id: row.id,
			status: row.status,
			ends: Object.fromEntries(
				Object.entries(runDataOf(row.data)).map(([name, runs]) => [
					name,
					Math.max(...runs.map((run) => (run.startTime ?? 0) + (run.executionTime ?? 0))),
				]),
			),
		}));
	}

	/**
	 * What a node put out in its last run of this execution: each output's items' json, by output index
	 * (none for a node that did not run).
	 */
	async nodeOutputs(
		executionId: number,
		node: string,
	): Promise<Array<Array<Record<string, unknown>>>> {
		const { rows } = await this.pool.query(
			`SELECT data FROM ${this.schema}.execution_data WHERE "executionId" = $1`,
			[executionId],
		);
		const runs = rows.length === 0 ? [] : (runDataOf(rows[0].data)[node] ?? []);
		const main = runs.at(-1)?.data?.main ?? [];
		return main.map((items) => (items ?? []).map((item) => item.json));
	}

	private async nodesRun(executionId: number): Promise<string[]> {
		const { rows } = await this.pool.query(
			`SELECT data FROM ${this.schema}.execution_data WHERE "executionId" = $1`,
			[executionId],
		);
		if (rows.length === 0) return [];
		return Object.keys(runDataOf(rows[0].data));
	}
}

/** What n8n saves of one run of a node: when it started (ms since the epoch) and how long it took. */
interface NodeRun {
	startTime?: number;
	executionTime?: number;
	/** Each output's items. */
	data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
}

/** The run data of a saved execution: each node's runs, by node name (none for a run n8n died under). */
function runDataOf(data: string): Record<string, NodeRun[]> {
	const parsed = parseFlatted(data) as
		{ resultData?: { runData?: Record<string, NodeRun[]> } } | undefined;
	return parsed?.resultData?.runData ?? {};
}
