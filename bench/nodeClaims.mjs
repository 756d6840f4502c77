// Runs the built Idempotency Claim / Idempotency Key nodes the way n8n calls them: execute() with a context.
import { randomUUID } from 'node:crypto';

import { eventBody, executeContext, webhookItem } from './executeContext.mjs';

/** A claim node bound to one table; items are built before timing starts (n8n's Webhook node builds them). */
export function nodeClaimer(dist, credentials, table) {
	const node = new dist.IdempotencyClaim();
	const parameters = { keySource: 'auto', claimMode: 'once', options: { table } };
	return {
		/** Context for one execution over webhook items with these event ids (Raw Body on). */
		prepare: (ids) =>
			executeContext(
				ids.map((id) => webhookItem(eventBody(id))),
				{ parameters, credentials },
			),
		/** The same, for json-only items (Raw Body off) — to see what reading binary costs. */
		prepareJsonOnly: (ids) =>
			executeContext(
				ids.map((id) => ({ json: { headers: {}, params: {}, query: {}, body: JSON.parse(eventBody(id)) } })),
				{ parameters, credentials },
			),
		/** Runs a prepared execution; returns [newItems, duplicateItems]. */
		run: (context) => node.execute.call(context),
	};
}

export function purgeRunner(dist, credentials, table) {
	const node = new dist.IdempotencyKey();
	return (olderThanDays, batchSize) =>
		node.execute.call(
			executeContext([{ json: {} }], {
				parameters: { operation: 'purge', olderThanDays, batchSize, options: { table } },
				credentials,
				nodeName: 'Idempotency Key',
				nodeType: 'idempotencyKey',
			}),
		);
}

/** Stripe-like event ids, unique per run. */
export function freshIds(count, prefix = 'evt_') {
	return Array.from({ length: count }, () => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 24)}`);
}

export const keyOf = (id) => `evt:${id}`;
