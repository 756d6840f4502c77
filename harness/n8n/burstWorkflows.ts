/**
 * The workflows the burst runs use (test/e2e/bursts*.e2e.test.ts, bench section 7b):
 *
 * - `burstWorkflow`: workflows/chat-burst-template.json as shipped, derived from the file at load time so
 *   that it follows the template (Collect, the flush, One Prompt, Complete and Release stay as they are),
 *   with its own webhook path, short rules, a flush every 2 s, One Prompt also carrying each burst's
 *   arrival times and how it ended, and the example step writing each burst to `burst_runs` once per
 *   burst id (a second run of a burst, after its lease ran out, counts `runs` up): the idempotent work
 *   docs/bursts.md asks for.
 * - `redisDebounceWorkflow` (redisDebounce.json): the debounce n8n's forum answers give, with built-in nodes and Redis: push
 *   the message to a list under the chat, Wait the quiet period, read the list, and if this message is
 *   still the last one, delete the list and run the work with what was read. Its work writes to
 *   `redis_runs`, one row per execution that ran it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { IDEMPOTENCY_CREDENTIAL, POSTGRES_CREDENTIAL, type CredentialEntry } from './credentials';
import {
	loadShippedWorkflow,
	loadWorkflowFile,
	newWorkflowId,
	type WorkflowJson,
	type WorkflowNode,
} from './workflows';

export interface BurstWorkflowRules {
	path: string;
	quietSeconds: number;
	maxWaitSeconds: number;
	maxItems: number;
	leaseSeconds: number;
	edge?: 'trailing' | 'leading';
}

/** The tables the two workflows' work writes (an app database's `appSql`). */
export const BURST_RUNS_SQL = `
CREATE TABLE burst_runs (
	burst_id text PRIMARY KEY,
	chat text NOT NULL,
	texts text NOT NULL,
	arrived text NOT NULL,
	ended_by text NOT NULL,
	opened_at timestamptz NOT NULL,
	ended_at timestamptz NOT NULL,
	taken_over boolean NOT NULL,
	ran_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	runs integer NOT NULL DEFAULT 1
);
CREATE TABLE redis_runs (
	id bigserial PRIMARY KEY,
	chat text NOT NULL,
	texts text NOT NULL,
	ran_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`;

export const REDIS_CREDENTIAL = { id: 'idemBenchRedis01', name: 'Redis account', type: 'redis' };

/** n8n's Redis credential for the Redis at host:port (for `extraCredentials`). */
export function redisCredential(host = '127.0.0.1', port = 6379): CredentialEntry {
	return { ...REDIS_CREDENTIAL, data: { host, port, database: 0, password: '', ssl: false } };
}

const byName = (nodes: WorkflowNode[], name: string) => {
	const node = nodes.find((candidate) => candidate.name === name);
	if (!node) throw new Error(`chat-burst-template.json has no node "${name}"; adapt this builder`);
	return node;
};

const assignment = (name: string, value: string, type = 'string') => ({
	id: `run-${name}`,
	name,
	value,
	type,
});

export function burstWorkflow(rules: BurstWorkflowRules): WorkflowJson {
	const template = loadShippedWorkflow('chat-burst-template.json');
	const nodes = structuredClone(template.nodes);
	const webhook = byName(nodes, 'Webhook');
	webhook.parameters.path = rules.path;
	webhook.webhookId = randomUUID();
	const collect = byName(nodes, 'Collect Messages');
	Object.assign(collect.parameters, {
		quietSeconds: rules.quietSeconds,
		maxWaitSeconds: rules.maxWaitSeconds,
		maxItems: rules.maxItems,
		leaseSeconds: rules.leaseSeconds,
		edge: rules.edge ?? 'trailing',
	});
	byName(nodes, 'Flush Due Bursts').parameters.leaseSeconds = rules.leaseSeconds;
	byName(nodes, 'Schedule Trigger').parameters.rule = {
		interval: [{ field: 'seconds', secondsInterval: 2 }],
	};
	const prompt = byName(nodes, 'One Prompt');
	const shipped = prompt.parameters.assignments as { assignments: object[] };
	prompt.parameters.assignments = {
		assignments: [
			...shipped.assignments,
			assignment('arrived', "={{ $json.burst.arrivedAt.join(',') }}"),
			assignment('endedBy', '={{ $json.burst.endedBy }}'),
			assignment('openedAt', '={{ $json.burst.openedAt }}'),
			assignment('endedAt', '={{ $json.burst.endedAt }}'),
			assignment('takenOver', '={{ $json.burst.takenOver }}', 'boolean'),
		],
	};
	const work = byName(nodes, 'Answer the Chat (example)');
	work.parameters.query =
		'INSERT INTO burst_runs (burst_id, chat, texts, arrived, ended_by, opened_at, ended_at, taken_over) ' +
		'VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (burst_id) DO UPDATE SET runs = burst_runs.runs + 1, ' +
		// A run after the first is a takeover (the first one's execution died after its work committed).
		'taken_over = burst_runs.taken_over OR EXCLUDED.taken_over';
	work.parameters.options = {
		...(work.parameters.options as object),
		queryReplacement:
			'={{ [ $json.burstId, $json.chatId, $json.text, $json.arrived, $json.endedBy, $json.openedAt, $json.endedAt, $json.takenOver ] }}',
	};
	return linked({
		...template,
		id: newWorkflowId(),
		name: `${template.name} (${rules.path})`,
		nodes,
	});
}

/**
 * The forum recipe, as built-in nodes (redisDebounce.json, importable as it is) on its own path and quiet
 * period; `prefix` keeps one run's Redis keys apart from any other's.
 */
export function redisDebounceWorkflow(
	path: string,
	quietSeconds: number,
	prefix: string,
): WorkflowJson {
	const workflow = loadWorkflowFile(join(__dirname, 'redisDebounce.json'));
	const list = `={{ '${prefix}:' + $('Webhook').item.json.body.message.chat.id }}`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = path;
			node.webhookId = randomUUID();
		}
		if (node.type === 'n8n-nodes-base.wait') node.parameters.amount = quietSeconds;
		if (node.type === 'n8n-nodes-base.redis')
			node.parameters[node.parameters.operation === 'push' ? 'list' : 'key'] = list;
	}
	return { ...workflow, name: `${workflow.name} (${path})` };
}

/** Each node's credential of this package and n8n's Postgres linked by id (the importer needs it). */
function linked(workflow: WorkflowJson): WorkflowJson {
	const ids: Record<string, { id: string; name: string }> = {
		idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL,
		postgres: POSTGRES_CREDENTIAL,
	};
	for (const node of workflow.nodes) {
		const used = node.credentials as Record<string, { id?: string; name: string }> | undefined;
		for (const type of Object.keys(used ?? {}))
			if (ids[type]) used![type] = { id: ids[type].id, name: ids[type].name };
	}
	return workflow;
}
