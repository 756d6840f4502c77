// Runs the built Idempotency Claim / Idempotency Key nodes the way n8n calls them: execute() with a context.
import { randomUUID } from 'node:crypto';

import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import {
	executeContext,
	webhookItem,
	type ContextOptions,
} from '../../harness/node/executeContext';
import type { Dist } from './dist';

/**
 * A claim node (Claim Once) bound to one table; items are built before timing starts (n8n's Webhook node
 * builds them).
 */
export function nodeClaimer(
	dist: Dist,
	credentials: PostgresCredentials,
	table: string,
	countRepeats = true,
) {
	const node = new dist.IdempotencyClaim();
	const parameters = {
		keySource: 'auto',
		claimMode: 'once',
		leaseSeconds: 300,
		options: { table, countRepeats },
	};
	const contextOf = (items: INodeExecutionData[]) =>
		executeContext(items, { parameters, credentials });
	return {
		/** Context for one execution over webhook items with these event ids (Raw Body on). */
		prepare: (ids: string[]) => contextOf(ids.map((id) => webhookItem(eventBody(id)))),
		/** The same, for json-only items (Raw Body off): to see what reading binary costs. */
		prepareJsonOnly: (ids: string[]) =>
			contextOf(
				ids.map((id) => ({
					json: { headers: {}, params: {}, query: {}, body: JSON.parse(eventBody(id)) },
				})),
			),
		/** Runs a prepared execution; returns [newItems, duplicateItems]. */
		run: (context: IExecuteFunctions): Promise<INodeExecutionData[][]> =>
			node.execute.call(context) as Promise<INodeExecutionData[][]>,
	};
}

/**
 * One of the built nodes bound to a table: runs its execute() over `items` with these parameters (Options
 * › Table set), as n8n calls it; `perItem` answers the parameters that are expressions in a workflow.
 */
export function nodeRunner(
	dist: Dist,
	name:
		| 'IdempotencyClaim'
		| 'IdempotencyKey'
		| 'IdempotencyBurst'
		| 'IdempotencyStep'
		| 'IdempotencyLimit',
	credentials: PostgresCredentials,
	table: string,
) {
	const node = new dist[name]();
	return (
		items: INodeExecutionData[],
		parameters: IDataObject,
		perItem?: ContextOptions['perItem'],
	): Promise<INodeExecutionData[][]> =>
		node.execute.call(
			executeContext(items, {
				parameters: { ...parameters, options: { table } },
				perItem,
				credentials,
				nodeName: name.replace('Idempotency', 'Idempotency '),
				nodeType: name[0].toLowerCase() + name.slice(1),
			}),
		) as Promise<INodeExecutionData[][]>;
}

/** The Idempotency Key parameters `key` and `claimId` of each item, from its claim's output. */
export const claimOfItem =
	(items: INodeExecutionData[]) =>
	(name: string, index: number): unknown =>
		name === 'key' || name === 'claimId'
			? (items[index]?.json.idempotency as IDataObject | undefined)?.[name]
			: undefined;

/** Stripe-like event ids, unique per run. */
export function freshIds(count: number, prefix = 'evt_'): string[] {
	return Array.from(
		{ length: count },
		() => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 24)}`,
	);
}

export const keyOf = (id: string): string => `evt:${id}`;

/** A Stripe-like event body with the given id. */
export function eventBody(id: string): string {
	return JSON.stringify({
		id,
		type: 'charge.succeeded',
		created: 1767225600,
		data: { object: { id: `ch_${id.slice(-12)}`, amount: 2000 } },
	});
}
