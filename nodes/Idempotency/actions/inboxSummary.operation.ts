import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import { emptyScope, summarizeInbox, type InboxSummary } from '../store/inbox/inboxSummary';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readTableRef } from './parameters/readTableRef';

/**
 * Summarize Inbox: one item per scope with kept events (keys made without a Scope first, always there),
 * each with how many events are due, running, scheduled and dead and how old the oldest of each is. Cheap
 * enough for every minute: it reads the event table, not the claim table. Runs once per execution.
 */
export async function executeInboxSummary(
	this: IExecuteFunctions,
): Promise<INodeExecutionData[][]> {
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	const needs: TableNeeds = { createIfMissing: false, privileges: ['SELECT'] };
	let summary: InboxSummary;
	try {
		const table = await openClaimTable(await poolFor(credentials), ref, needs);
		// No event table (or no leases, which keeping an event needs): nothing was ever kept.
		summary =
			table.capabilities.events && table.capabilities.leases
				? await withCurrentTable(table, needs, (current) => summarizeInbox(current))
				: { scopes: [emptyScope(null)], now: new Date() };
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
	const at = summary.now.toISOString();
	return [
		summary.scopes.map((scope) => ({
			json: { kind: 'inbox_summary', table: `${ref.schema}.${ref.table}`, ...scope, at },
			pairedItem: { item: 0 },
		})),
	];
}
