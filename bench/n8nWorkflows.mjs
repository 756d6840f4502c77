// The workflows the n8n benchmarks publish: their own small ones (built here) and the two shipped
// templates from workflows/ (used as they are, with an id added). Credentials are the ones
// scripts/n8n/credentials.mjs imports, referenced by name like the templates do.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { IDEMPOTENCY_CREDENTIAL, POSTGRES_CREDENTIAL } from '../scripts/n8n/credentials.mjs';
import { newWorkflowId } from '../scripts/n8n/instance.mjs';

export const CLAIM_TABLE = 'bench_n8n_claims';
export const BUSINESS_TABLE = 'business_log';

const idempotencyCredentials = { idempotencyPostgresApi: { id: IDEMPOTENCY_CREDENTIAL.id, name: IDEMPOTENCY_CREDENTIAL.name } };
const postgresCredentials = { postgres: { id: POSTGRES_CREDENTIAL.id, name: POSTGRES_CREDENTIAL.name } };

function node(name, type, typeVersion, parameters, extra = {}) {
	return { id: randomUUID(), name, type, typeVersion, position: [0, 0], parameters, ...extra };
}

function webhook(path) {
	return node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		{ httpMethod: 'POST', path, responseMode: 'responseNode', options: { rawBody: true } },
		{ webhookId: randomUUID() },
	);
}

function respond(name, body) {
	return node(name, 'n8n-nodes-base.respondToWebhook', 1.4, {
		respondWith: 'json',
		responseBody: body,
		options: { responseCode: 200 },
	});
}

function claim(extraParameters = {}) {
	return node(
		'Idempotency Claim',
		'n8n-nodes-idempotency.idempotencyClaim',
		1,
		{ keySource: 'auto', claimMode: 'once', options: { table: CLAIM_TABLE }, ...extraParameters },
		{ credentials: idempotencyCredentials },
	);
}

function businessInsert(keyExpression, eventType) {
	return node(
		'Business Step',
		'n8n-nodes-base.postgres',
		2.6,
		{
			operation: 'executeQuery',
			query: `INSERT INTO ${BUSINESS_TABLE} (event_key, event_type) VALUES ($1, $2)`,
			options: { queryReplacement: `={{ [ ${keyExpression}, '${eventType}' ] }}` },
		},
		{ credentials: postgresCredentials },
	);
}

/** nodes in order; links: [from, to, fromOutput = 0] */
function workflow(name, nodes, links) {
	const connections = {};
	for (const [from, to, output = 0] of links) {
		const outputs = (connections[from] ??= { main: [] }).main;
		while (outputs.length <= output) outputs.push([]);
		outputs[output].push({ node: to, type: 'main', index: 0 });
	}
	nodes.forEach((n, index) => (n.position = [index * 220, 300]));
	return { id: newWorkflowId(), name, nodes, connections, settings: { executionOrder: 'v1' }, active: false };
}

/** Webhook → Respond: what n8n itself costs per request. */
export function floorWorkflow(path = 'bench-floor') {
	return workflow('bench: floor', [webhook(path), respond('Respond', '{"status":"ok"}')], [['Webhook', 'Respond']]);
}

/** Webhook → Idempotency Claim → Respond (New / Duplicate). */
export function claimWorkflow(path = 'bench-claim') {
	return workflow(
		'bench: claim',
		[webhook(path), claim(), respond('Respond New', '{"status":"new"}'), respond('Respond Duplicate', '{"status":"duplicate"}')],
		[
			['Webhook', 'Idempotency Claim'],
			['Idempotency Claim', 'Respond New', 0],
			['Idempotency Claim', 'Respond Duplicate', 1],
		],
	);
}

/** Webhook → Idempotency Claim → (New) business insert → Respond; (Duplicate) → Respond. */
export function claimWithBusinessStepWorkflow(path, eventType) {
	return workflow(
		'bench: claim + business step',
		[
			webhook(path),
			claim(),
			businessInsert('$json.idempotency.key', eventType),
			respond('Respond Processed', '{"status":"processed"}'),
			respond('Respond Duplicate', '{"status":"duplicate"}'),
		],
		[
			['Webhook', 'Idempotency Claim'],
			['Idempotency Claim', 'Business Step', 0],
			['Idempotency Claim', 'Respond Duplicate', 1],
			['Business Step', 'Respond Processed'],
		],
	);
}

/** Webhook → Remove Duplicates (seen in previous executions) → business insert → Respond. */
export function removeDuplicatesWorkflow(path, eventType) {
	return workflow(
		'bench: Remove Duplicates + business step',
		[
			webhook(path),
			node('Remove Duplicates', 'n8n-nodes-base.removeDuplicates', 2, {
				operation: 'removeItemsSeenInPreviousExecutions',
				logic: 'removeItemsWithAlreadySeenKeyValues',
				dedupeValue: '={{ $json.body.id }}',
				options: {},
			}),
			businessInsert("'evt:' + $json.body.id", eventType),
			respond('Respond Processed', '{"status":"processed"}'),
		],
		[
			['Webhook', 'Remove Duplicates'],
			['Remove Duplicates', 'Business Step'],
			['Business Step', 'Respond Processed'],
		],
	);
}

/** Webhook (body {events:[{id}…]}) → Split Out → Idempotency Claim → Respond: many claims per execution. */
export function batchClaimWorkflow(path = 'bench-batch-claim') {
	return workflow(
		'bench: batched claims',
		[
			webhook(path),
			node('Split Out', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'body.events', include: 'noOtherFields', options: {} }),
			claim({ keySource: 'field', fieldPath: 'id' }),
			respond('Respond New', '={{ { status: "new", count: $input.all().length } }}'),
			respond('Respond Duplicate', '={{ { status: "duplicate", count: $input.all().length } }}'),
		],
		[
			['Webhook', 'Split Out'],
			['Split Out', 'Idempotency Claim'],
			['Idempotency Claim', 'Respond New', 0],
			['Idempotency Claim', 'Respond Duplicate', 1],
		],
	);
}

/** A shipped template from workflows/, with an id; returns it and its webhook path. */
export function shippedTemplate(file) {
	const template = JSON.parse(readFileSync(new URL(`../workflows/${file}`, import.meta.url), 'utf8'));
	const hook = template.nodes.find((n) => n.type === 'n8n-nodes-base.webhook');
	if (!hook) throw new Error(`workflows/${file} has no Webhook node`);
	return { workflow: { ...template, id: newWorkflowId(), active: false }, path: hook.parameters.path };
}

export function webhookPathOf(workflowJson) {
	return workflowJson.nodes.find((n) => n.type === 'n8n-nodes-base.webhook').parameters.path;
}
