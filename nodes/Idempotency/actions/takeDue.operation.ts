import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readWebhookBody } from '../../shared/body/webhookBody';
import { LONGEST_DURATION_SECONDS } from '../descriptions/durationLimit';
import { INBOX_DEFAULTS } from '../descriptions/inboxProperties';
import { readOptionalScope } from '../key/scope';
import {
	openClaimTable,
	withCurrentTable,
	type ClaimTable,
	type TableNeeds,
} from '../store/table/claimTable';
import { newClaimId } from '../store/record/claimId';
import { parkHeldEvents, takeDueEvents, type DueEvent, type DueEvents } from '../store/inbox/inbox';
import { CLAIM_ID_COLUMNS } from '../store/table/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readNumber } from './parameters/readNumber';
import { readTableRef } from './parameters/readTableRef';
import { takenEventResult } from '../store/record/idempotencyResult';

/**
 * For a scheduled workflow: takes over the kept events that are due and outputs each as the Webhook node
 * would (headers, the body parsed the same way, the raw bytes as binary `data`), with `idempotency`
 * holding the key and this run's claim ID, so the same business step, Complete and Retry Later run on
 * it unchanged. Runs once per execution, whatever the input.
 */
export async function executeTakeDue(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const maxEvents = readNumber(
		this.getNodeParameter('maxEvents', 0, INBOX_DEFAULTS.maxEvents),
		'Max Events',
		{ min: 1, max: 10000, integer: true },
	);
	const leaseSeconds = readNumber(
		this.getNodeParameter('leaseSeconds', 0, INBOX_DEFAULTS.leaseSeconds),
		'Lease (Seconds)',
		{ min: 1, max: LONGEST_DURATION_SECONDS },
	);
	const maxAttempts = readNumber(
		this.getNodeParameter('maxAttempts', 0, INBOX_DEFAULTS.maxAttempts),
		'Max Attempts',
		{ min: 1, max: 1000, integer: true },
	);
	const scope = readOptionalScope(this.getNodeParameter('scope', 0, ''));
	const credentials = await readCredentials(this);
	const needs: TableNeeds = {
		createIfMissing: false,
		columns: CLAIM_ID_COLUMNS,
		privileges: ['SELECT', 'UPDATE', 'DELETE'],
	};
	const claimId = newClaimId();
	let due: DueEvents;
	let table: ClaimTable;
	try {
		table = await openClaimTable(await poolFor(credentials), readTableRef(this), needs);
		// No event table yet: no claim has kept an event, so none is due.
		if (!table.capabilities.events) return [[]];
		due = await withCurrentTable(table, needs, (current) =>
			takeDueEvents(current, { limit: maxEvents, leaseSeconds, maxAttempts, claimId, scope }),
		);
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
	const out: INodeExecutionData[] = [];
	const unreadable: Array<{ key: string; reason: string }> = [];
	for (const event of due.taken) {
		const body = readWebhookBody(event.body, event.contentType ?? undefined);
		if (body.ok) out.push(await webhookShaped(this, event, body.body, claimId));
		else unreadable.push({ key: event.key, reason: `Take Due Events: ${body.problem}` });
	}
	// A business step given an empty body could succeed and Complete would drop the event: park it instead.
	// If parking fails, the events this run could read still go on; the others stay held by this run and are
	// due again when its lease ends, when the next run parks them.
	if (unreadable.length > 0)
		await parkHeldEvents(table, claimId, unreadable).catch(() => undefined);
	return [out];
}

async function webhookShaped(
	context: IExecuteFunctions,
	event: DueEvent,
	body: unknown,
	claimId: string,
): Promise<INodeExecutionData> {
	const headers = { ...event.headers };
	if (event.contentType !== null) headers['content-type'] ??= event.contentType;
	const json: IDataObject = {
		headers,
		params: {},
		query: {},
		// What n8n's Webhook node put there on the first run, read again from the same bytes.
		body: body as IDataObject,
		idempotency: takenEventResult(event, claimId) as IDataObject,
	};
	const mimeType = event.contentType ?? 'application/octet-stream';
	return {
		json,
		binary: { data: await context.helpers.prepareBinaryData(event.body, 'body', mimeType) },
		pairedItem: { item: 0 },
	};
}
