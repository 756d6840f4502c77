// The small workflows the n8n benchmarks publish besides the shipped templates. Credentials are the
// ones harness/n8n/credentials.ts imports, referenced by name like the templates do.
import { randomUUID } from 'node:crypto';

import {
	IDEMPOTENCY_CREDENTIAL,
	POSTGRES_CREDENTIAL,
	SIGNING_CREDENTIAL,
} from '../../harness/n8n/credentials';
import {
	loadShippedWorkflow,
	newWorkflowId,
	type WorkflowJson,
	type WorkflowNode,
} from '../../harness/n8n/workflows';

const CLAIM_TABLE = 'bench_n8n_claims';
const BUSINESS_TABLE = 'business_log';

const byName = ({ id, name }: { id: string; name: string }) => ({ id, name });
const idempotencyCredentials = { idempotencyPostgresApi: byName(IDEMPOTENCY_CREDENTIAL) };
const postgresCredentials = { postgres: byName(POSTGRES_CREDENTIAL) };

function node(
	name: string,
	type: string,
	typeVersion: number,
	parameters: Record<string, unknown>,
	extra: Record<string, unknown> = {},
): WorkflowNode {
	return { id: randomUUID(), name, type, typeVersion, position: [0, 0], parameters, ...extra };
}

/** Answered by a Respond node (raw body kept for the signature), or, for a poll, when the workflow ends. */
function webhook(
	path: string,
	answered: 'byRespondNode' | 'whenDone' = 'byRespondNode',
): WorkflowNode {
	const response =
		answered === 'byRespondNode'
			? { responseMode: 'responseNode', options: { rawBody: true } }
			: { responseMode: 'lastNode', responseData: 'noData', options: {} };
	return node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		{ httpMethod: 'POST', path, ...response },
		{ webhookId: randomUUID() },
	);
}

function splitOut(field: string): WorkflowNode {
	return node('Split Out', 'n8n-nodes-base.splitOut', 1, {
		fieldToSplitOut: field,
		include: 'noOtherFields',
		options: {},
	});
}

/** Remove Duplicates, "Remove Items Processed in Previous Executions", Value Is New on `dedupeValue`. */
function removeDuplicates(dedupeValue: string): WorkflowNode {
	return node('Remove Duplicates', 'n8n-nodes-base.removeDuplicates', 2, {
		operation: 'removeItemsSeenInPreviousExecutions',
		logic: 'removeItemsWithAlreadySeenKeyValues',
		dedupeValue,
		options: {},
	});
}

function respond(name: string, body: string): WorkflowNode {
	return node(name, 'n8n-nodes-base.respondToWebhook', 1.4, {
		respondWith: 'json',
		responseBody: body,
		options: { responseCode: 200 },
	});
}

function claim(extraParameters: Record<string, unknown> = {}): WorkflowNode {
	return node(
		'Idempotency Claim',
		'n8n-nodes-idempotency.idempotencyClaim',
		1,
		{ keySource: 'auto', claimMode: 'once', options: { table: CLAIM_TABLE }, ...extraParameters },
		{ credentials: idempotencyCredentials },
	);
}

/** n8n's Postgres node running `query` with the values `replacement` (an n8n expression's array). */
function businessStep(query: string, replacement: string): WorkflowNode {
	return node(
		'Business Step',
		'n8n-nodes-base.postgres',
		2.6,
		{
			operation: 'executeQuery',
			query,
			options: { queryReplacement: `={{ [ ${replacement} ] }}` },
		},
		{ credentials: postgresCredentials },
	);
}

function businessInsert(keyExpression: string, eventType: string): WorkflowNode {
	return businessStep(
		`INSERT INTO ${BUSINESS_TABLE} (event_key, event_type) VALUES ($1, $2)`,
		`${keyExpression}, '${eventType}'`,
	);
}

/** nodes in order; outputs: each node's outputs in order, each connected to the named node. */
function workflow(
	name: string,
	nodes: WorkflowNode[],
	outputs: Record<string, string[]>,
): WorkflowJson {
	const connections = Object.fromEntries(
		Object.entries(outputs).map(([from, targets]) => [
			from,
			{ main: targets.map((to) => [{ node: to, type: 'main', index: 0 }]) },
		]),
	);
	nodes.forEach((n, index) => (n.position = [index * 220, 300]));
	return {
		id: newWorkflowId(),
		name,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		active: false,
	};
}

/** Webhook → Respond: what n8n itself costs per request. */
export function floorWorkflow(path = 'bench-floor'): WorkflowJson {
	return workflow('bench: floor', [webhook(path), respond('Respond', '{"status":"ok"}')], {
		Webhook: ['Respond'],
	});
}

/**
 * Webhook → Webhook Signature → Idempotency Claim → Respond: the check in front of the claim, with the
 * node template's scheme (Generic HMAC, `X-Signature: sha256=<hex>`, which the load generator sends).
 */
export function signedClaimWorkflow(path = 'bench-signed-claim'): WorkflowJson {
	return workflow(
		'bench: signature + claim',
		[
			webhook(path),
			node(
				'Webhook Signature',
				'n8n-nodes-idempotency.webhookSignature',
				1,
				{
					scheme: 'genericHmac',
					signatureHeader: 'X-Signature',
					algorithm: 'sha256',
					encoding: 'hex',
					prefix: 'sha256=',
					timestampHeader: '',
					signedContent: '{body}',
					options: {},
				},
				{ credentials: { idempotencyWebhookSigningApi: byName(SIGNING_CREDENTIAL) } },
			),
			claim({ options: { table: 'bench_n8n_signed_claims' } }),
			respond('Respond New', '{"status":"new"}'),
			respond('Respond Duplicate', '{"status":"duplicate"}'),
			respond('Respond Invalid', '{"status":"invalid"}'),
		],
		{
			Webhook: ['Webhook Signature'],
			'Webhook Signature': ['Idempotency Claim', 'Respond Invalid'],
			'Idempotency Claim': ['Respond New', 'Respond Duplicate'],
		},
	);
}

/** Webhook → Idempotency Claim → Respond (New / Duplicate). */
export function claimWorkflow(path = 'bench-claim'): WorkflowJson {
	return workflow(
		'bench: claim',
		[
			webhook(path),
			claim(),
			respond('Respond New', '{"status":"new"}'),
			respond('Respond Duplicate', '{"status":"duplicate"}'),
		],
		{
			Webhook: ['Idempotency Claim'],
			'Idempotency Claim': ['Respond New', 'Respond Duplicate'],
		},
	);
}

/** Webhook → Idempotency Claim → (New) business insert → Respond; (Duplicate) → Respond. */
export function claimWithBusinessStepWorkflow(path: string, eventType: string): WorkflowJson {
	return workflow(
		'bench: claim + business step',
		[
			webhook(path),
			claim(),
			businessInsert('$json.idempotency.key', eventType),
			respond('Respond Processed', '{"status":"processed"}'),
			respond('Respond Duplicate', '{"status":"duplicate"}'),
		],
		{
			Webhook: ['Idempotency Claim'],
			'Idempotency Claim': ['Business Step', 'Respond Duplicate'],
			'Business Step': ['Respond Processed'],
		},
	);
}

/** Webhook → Remove Duplicates (seen in previous executions) → business insert → Respond. */
export function removeDuplicatesWorkflow(path: string, eventType: string): WorkflowJson {
	return workflow(
		'bench: Remove Duplicates + business step',
		[
			webhook(path),
			removeDuplicates('={{ $json.body.id }}'),
			businessInsert("'evt:' + $json.body.id", eventType),
			respond('Respond Processed', '{"status":"processed"}'),
		],
		{
			Webhook: ['Remove Duplicates'],
			'Remove Duplicates': ['Business Step'],
			'Business Step': ['Respond Processed'],
		},
	);
}

/** Webhook (body {events:[{id}…]}) → Split Out → Idempotency Claim → Respond: many claims per execution. */
export function batchClaimWorkflow(path = 'bench-batch-claim'): WorkflowJson {
	return workflow(
		'bench: batched claims',
		[
			webhook(path),
			splitOut('body.events'),
			claim({ keySource: 'field', fieldPath: 'id' }),
			respond('Respond New', '={{ { status: "new", count: $input.all().length } }}'),
			respond('Respond Duplicate', '={{ { status: "duplicate", count: $input.all().length } }}'),
		],
		{
			Webhook: ['Split Out'],
			'Split Out': ['Idempotency Claim'],
			'Idempotency Claim': ['Respond New', 'Respond Duplicate'],
		},
	);
}

const POLLED_BUSINESS_TABLE = 'bench_polled_business';
/** Polls of 1,000 items are many: only their outcome is kept, as a production instance would. */
const UNSAVED = { saveDataSuccessExecution: 'none', saveManualExecutions: false };

/**
 * A poll delivered by webhook, so the benchmark starts it on demand: Webhook (body {items:[{id}…]},
 * answered when the workflow has finished) → Split Out → `dedupe` → the business step, which records each
 * item it is handed (`side`, id) in bench_polled_business.
 */
function polledWorkflow(
	name: string,
	path: string,
	side: string,
	dedupe: WorkflowNode,
): WorkflowJson {
	const built = workflow(
		`bench: polled feed, ${name}`,
		[
			webhook(path, 'whenDone'),
			splitOut('body.items'),
			dedupe,
			businessStep(
				`INSERT INTO ${POLLED_BUSINESS_TABLE} (side, item_id) VALUES ($1, $2)`,
				`'${side}', $json.id`,
			),
		],
		{ Webhook: ['Split Out'], 'Split Out': [dedupe.name], [dedupe.name]: ['Business Step'] },
	);
	return { ...built, settings: { ...(built.settings as object), ...UNSAVED } };
}

/** The floor: the poll's first 10 items (the new ones) go to the business step, nothing is remembered. */
export function polledFloorWorkflow(path = 'bench-polled-floor'): WorkflowJson {
	return polledWorkflow(
		'no deduplication',
		path,
		'floor',
		node('First 10 Items', 'n8n-nodes-base.limit', 1, { maxItems: 10 }),
	);
}

/**
 * Idempotency Claim, Key Source Polled Item: Value Is New on `{{ $json.id }}` (counting repeats or not),
 * or Value Is Higher on `{{ $json.seq }}`.
 */
export function polledClaimWorkflow(
	path: string,
	side: string,
	table: string,
	variant: 'new' | 'counting' | 'higher' = 'new',
): WorkflowJson {
	const keep =
		variant === 'higher'
			? { keepItemsWhere: 'higher', dedupeValue: '={{ $json.seq }}' }
			: { keepItemsWhere: 'new', dedupeValue: '={{ $json.id }}', claimMode: 'once' };
	const options = { table, scope: side, ...(variant === 'counting' ? { countRepeats: true } : {}) };
	return polledWorkflow(
		`Idempotency Claim (${variant})`,
		path,
		side,
		node(
			'Idempotency Claim',
			'n8n-nodes-idempotency.idempotencyClaim',
			1,
			{ keySource: 'polled', ...keep, options },
			{ credentials: idempotencyCredentials },
		),
	);
}

/** Remove Duplicates, Value Is New on `{{ $json.id }}`. */
export function polledRemoveDuplicatesWorkflow(
	path = 'bench-polled-remove-duplicates',
): WorkflowJson {
	return polledWorkflow(
		'Remove Duplicates',
		path,
		'removeDuplicates',
		removeDuplicates('={{ $json.id }}'),
	);
}

/** The Idempotency credential of the API benchmark: a pool of 10 connections for 20 callers at once. */
export const SMALL_POOL_CREDENTIAL = {
	id: 'idemBenchPool10',
	name: 'Idempotency Postgres (10 connections)',
	type: 'idempotencyPostgresApi',
};
export const SMALL_POOL_CONNECTIONS = 10;

/** How long the API benchmark's order step holds its claim (a business step that takes its time). */
export const API_ORDER_MS = 300;

/**
 * workflows/idempotent-api-endpoint.json as shipped, on its own path, its Idempotency nodes on the
 * 10-connection credential, its order insert held for API_ORDER_MS.
 */
export function apiWorkflow(path = 'bench-api'): WorkflowJson {
	const template = loadShippedWorkflow('idempotent-api-endpoint.json');
	const nodes = structuredClone(template.nodes).map((n) => {
		if (n.type === 'n8n-nodes-base.webhook')
			return { ...n, webhookId: randomUUID(), parameters: { ...n.parameters, path } };
		if (n.type.startsWith('n8n-nodes-idempotency.'))
			return { ...n, credentials: { idempotencyPostgresApi: byName(SMALL_POOL_CREDENTIAL) } };
		if (n.name === 'Create Order (example)')
			return {
				...n,
				credentials: postgresCredentials,
				parameters: {
					...n.parameters,
					query: `INSERT INTO ${BUSINESS_TABLE} (event_key, event_type) SELECT $1, 'order.created' FROM pg_sleep(${API_ORDER_MS / 1000}) RETURNING id`,
				},
			};
		return n;
	});
	return { ...template, id: newWorkflowId(), name: 'bench: idempotent API endpoint', nodes };
}
