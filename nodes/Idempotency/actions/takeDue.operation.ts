import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
} from 'n8n-workflow';

import { readSignedBody } from '../../shared/body/signedBody';
import { LONGEST_DURATION_SECONDS } from '../descriptions/durationLimit';
import { INBOX_DEFAULTS } from '../descriptions/inboxProperties';
import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/claimTable';
import { newClaimId } from '../store/claimId';
import { takeDueEvents, type DueEvent, type DueEvents } from '../store/inbox';
import { CLAIM_ID_COLUMNS } from '../store/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readNumber } from './parameters/readNumber';
import { readTableRef } from './parameters/readTableRef';

/**
 * For a scheduled workflow: takes over the kept events that are due and outputs each as the Webhook node
 * would (headers, the body parsed the same way, the raw bytes as binary `data`), with `idempotency`
 * holding the key and this run's claim ID, so the same business step, Complete and Retry Later run on
 * it unchanged. Runs once per execution, whatever the input.
 */
export async function executeTakeDue(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	let maxEvents: number;
	let leaseSeconds: number;
	let maxAttempts: number;
	try {
		maxEvents = readNumber(
			this.getNodeParameter('maxEvents', 0, INBOX_DEFAULTS.maxEvents),
			'Max Events',
			{ min: 1, max: 10000, integer: true },
		);
		leaseSeconds = readNumber(
			this.getNodeParameter('leaseSeconds', 0, INBOX_DEFAULTS.leaseSeconds),
			'Lease (Seconds)',
			{ min: 1, max: LONGEST_DURATION_SECONDS },
		);
		maxAttempts = readNumber(
			this.getNodeParameter('maxAttempts', 0, INBOX_DEFAULTS.maxAttempts),
			'Max Attempts',
			{ min: 1, max: 1000, integer: true },
		);
	} catch (error) {
		throw new NodeOperationError(this.getNode(), (error as Error).message);
	}
	const credentials = await readCredentials(this);
	const needs: TableNeeds = {
		createIfMissing: false,
		columns: CLAIM_ID_COLUMNS,
		privileges: ['SELECT', 'UPDATE', 'DELETE'],
	};
	const claimId = newClaimId();
	let due: DueEvents;
	try {
		const table = await openClaimTable(await poolFor(credentials), readTableRef(this), needs);
		// No event table yet: no claim has kept an event, so none is due.
		if (!table.capabilities.events) return [[]];
		due = await withCurrentTable(table, needs, (current) =>
			takeDueEvents(current, { limit: maxEvents, leaseSeconds, maxAttempts, claimId }),
		);
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
	const out: INodeExecutionData[] = [];
	for (const event of due.taken) out.push(await webhookShaped(this, event, claimId));
	return [out];
}

async function webhookShaped(
	context: IExecuteFunctions,
	event: DueEvent,
	claimId: string,
): Promise<INodeExecutionData> {
	const parsed = readSignedBody(event.body, event.contentType ?? undefined);
	const headers = { ...event.headers };
	if (event.contentType !== null) headers['content-type'] ??= event.contentType;
	const json: IDataObject = {
		headers,
		params: {},
		query: {},
		// What n8n's Webhook node puts there for JSON and form bodies; any other body only as binary data.
		body: (parsed.ok ? parsed.body : {}) as IDataObject,
		idempotency: {
			key: event.key,
			isNew: true,
			status: 'processing',
			reclaimed: true,
			source: 'inbox',
			claimId,
			attempts: event.attempts,
			lastError: event.lastError,
			receivedAt: event.receivedAt.toISOString(),
			leaseUntil: event.leaseUntil.toISOString(),
		},
	};
	const mimeType = event.contentType ?? 'application/octet-stream';
	return {
		json,
		binary: { data: await context.helpers.prepareBinaryData(event.body, 'body', mimeType) },
		pairedItem: { item: 0 },
	};
}
