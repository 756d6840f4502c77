/**
 * The inbox's nodes as a workflow runs them, on real Postgres: the claim node with Keep Event, the Key
 * node's operations on items that carry idempotency.key and idempotency.claimId (as the templates map them),
 * and what the event table holds. Shared by the node-level inbox tests.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import type { Pool } from 'pg';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { testCredentials } from './database';

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

/** A GitHub-like delivery: its id in the body, the event's type in a header, a signature not to keep. */
export const delivery = (id: string, extra: Record<string, string> = {}) =>
	webhookItem(JSON.stringify({ id, type: 'push', note: 'café' }), {
		'x-github-event': 'push',
		'x-hub-signature-256': 'sha256=secret-looking',
		...extra,
	});

/** Claim With Lease, Keep Event, under "Continue (using error output)". */
export function claim(
	items: INodeExecutionData[],
	table: string,
	extra: IDataObject = {},
	credentials: PostgresCredentials = testCredentials(),
) {
	return claimNode.execute.call(
		executeContext(items, {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: 300,
				keepEvent: true,
				keptHeaders: 'X-GitHub-Event',
				options: { table },
				...extra,
			},
			credentials,
			continueOnFail: true,
		}),
	);
}

/** The Key node on items that carry idempotency.key and idempotency.claimId, as the templates map them. */
export function keyOperation(
	operation: string,
	items: INodeExecutionData[],
	table: string,
	extra: IDataObject = {},
	credentials: PostgresCredentials = testCredentials(),
) {
	return keyNode.execute.call(
		executeContext(items.length > 0 ? items : [{ json: {} }], {
			parameters: { operation, options: { table }, ...extra },
			perItem: (name, index) => {
				const result = (items[index]?.json.idempotency ?? {}) as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return result.claimId;
				// Retry Later's delay as its default expression reads it: Check Rate's answer on the item.
				if (name === 'delaySeconds') return ((result.rate ?? {}) as IDataObject).retryAfterSeconds;
				return undefined;
			},
			credentials,
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
		}),
	);
}

export const takeDue = (table: string, extra: IDataObject = {}) =>
	keyOperation('takeDue', [], table, { maxEvents: 100, leaseSeconds: 300, ...extra });

export const retryLater = (items: INodeExecutionData[], table: string, extra: IDataObject = {}) =>
	keyOperation('retryLater', items, table, {
		errorMessage: 'the shipping API answered 502',
		backoff: { baseSeconds: 60, jitter: 0 },
		...extra,
	});

/** What a test reads in a claim table's event table, as the database's owner. */
export function inboxTables(admin: Pool) {
	return {
		eventRows: async (table: string) =>
			(
				await admin.query(
					`SELECT key, attempts, dead_at IS NOT NULL AS dead, last_error, content_type, headers, convert_from(body, 'UTF8') AS body FROM ${table}_events ORDER BY key`,
				)
			).rows,
	};
}

/** The key each item carries. */
export const keysOf = (items: INodeExecutionData[]) =>
	items.map((item) => (item.json.idempotency as IDataObject).key);
