// The workflows the n8n benchmarks publish: the shipped templates, the small workflows in bench/workflows/
// (importable into n8n as they are; credentials are the ones harness/n8n/credentials.ts imports, referenced
// by name like the templates do), and the API template on a pool of its own.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { POSTGRES_CREDENTIAL } from '../../harness/n8n/credentials';
import {
	loadShippedWorkflow,
	loadWorkflowFile,
	newWorkflowId,
	type WorkflowJson,
} from '../../harness/n8n/workflows';

const benchWorkflow = (name: string) =>
	loadWorkflowFile(join(__dirname, '..', 'workflows', `${name}.json`));
const BENCH_FILES = [
	'floor',
	'claim',
	'signedClaim',
	'claimOnceTemplate',
	'nodeVsRemoveDuplicates',
	'removeDuplicates',
	'batchClaim',
	'polledFloor',
	'polledClaim',
	'polledCounting',
	'polledWatermark',
	'polledRemoveDuplicates',
] as const;

/**
 * Every workflow by the name the suites use. bench/workflows/: Webhook → Respond (floor); Webhook →
 * [Webhook Signature →] Idempotency Claim → Respond; Webhook → Idempotency Claim (Claim Once) or Remove
 * Duplicates → business insert → Respond; Webhook with 100 events → Split Out → Idempotency Claim →
 * Respond; and a poll delivered by webhook (answered when the workflow has finished, executions not saved)
 * → Split Out → a deduplication (none and the first 10 items, Idempotency Claim Polled Item, Remove
 * Duplicates) → an insert per item passed into bench_polled_business.
 */
export const benchWorkflows = () => ({
	...(Object.fromEntries(BENCH_FILES.map((name) => [name, benchWorkflow(name)])) as Record<
		(typeof BENCH_FILES)[number],
		WorkflowJson
	>),
	nodeTemplate: loadShippedWorkflow('idempotency-claim-template.json'),
	builtinTemplate: loadShippedWorkflow('builtin-nodes-template.json'),
	api: apiWorkflow(),
});

/** The Idempotency credential of the API benchmark: a pool of 10 connections for 20 callers at once. */
export const SMALL_POOL_CREDENTIAL = {
	id: 'idemBenchPool10',
	name: 'Idempotency Postgres (10 connections)',
	type: 'idempotencyPostgresApi',
};
export const SMALL_POOL_CONNECTIONS = 10;

/** How long the API benchmark's order step holds its claim (a business step that takes its time). */
const API_ORDER_MS = 300;

/**
 * workflows/idempotent-api-endpoint.json as shipped, on its own path, its Idempotency nodes on the
 * 10-connection credential, its order insert held for API_ORDER_MS.
 */
function apiWorkflow(path = 'bench-api'): WorkflowJson {
	const template = loadShippedWorkflow('idempotent-api-endpoint.json');
	const byName = ({ id, name }: { id: string; name: string }) => ({ id, name });
	const nodes = structuredClone(template.nodes).map((n) => {
		if (n.type === 'n8n-nodes-base.webhook')
			return { ...n, webhookId: randomUUID(), parameters: { ...n.parameters, path } };
		if (n.type.startsWith('n8n-nodes-idempotency.'))
			return { ...n, credentials: { idempotencyPostgresApi: byName(SMALL_POOL_CREDENTIAL) } };
		if (n.name === 'Create Order (example)')
			return {
				...n,
				credentials: { postgres: byName(POSTGRES_CREDENTIAL) },
				parameters: {
					...n.parameters,
					query: `INSERT INTO business_log (event_key, event_type) SELECT $1, 'order.created' FROM pg_sleep(${API_ORDER_MS / 1000}) RETURNING id`,
				},
			};
		return n;
	});
	return { ...template, id: newWorkflowId(), name: 'bench: idempotent API endpoint', nodes };
}
