import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import { listDeadLetters } from '../store/inbox/inbox';
import { countStuckClaims, listStuckClaims } from '../store/claims/stuckClaims';
import { summarizeTable } from '../store/claims/tableSummary';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readSwitch } from './parameters/readSwitch';
import { readCredentials } from './parameters/readCredentials';
import { readNumber } from './parameters/readNumber';
import { readTableRef } from './parameters/readTableRef';

/**
 * One item per stuck claim (processing, lease expired, first seen before the threshold), oldest first,
 * then one per dead letter (a kept event parked after Max Attempts, with its last error), and on request
 * one summary item before them. Runs once per execution, whatever the input.
 */
export async function executeListStuck(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const stuckAfterMinutes = readNumber(
		this.getNodeParameter('stuckAfterMinutes', 0, 60),
		'First Seen More Than (Minutes) Ago',
		// A hundred years: far more overflows Postgres' interval, a database error instead of this one.
		{ min: 0, max: 52_560_000 },
	);
	const maxKeys = readNumber(this.getNodeParameter('maxKeys', 0, 1000), 'Max Keys', {
		min: 1,
		max: 100000,
		integer: true,
	});
	const includeSummary = readSwitch(this, 'includeSummary', false, 'Include Table Summary');
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	const tableName = `${ref.schema}.${ref.table}`;
	const needs: TableNeeds = { createIfMissing: false, privileges: ['SELECT'] };
	const out: INodeExecutionData[] = [];
	try {
		const table = await openClaimTable(await poolFor(credentials), ref, needs);
		const stuck = await withCurrentTable(table, needs, (current) =>
			listStuckClaims(current, { firstSeenMinutesAgo: stuckAfterMinutes, limit: maxKeys }),
		);
		if (includeSummary) {
			const summary = await withCurrentTable(table, needs, (current) =>
				summarizeTable(current, { now: stuck.now }),
			);
			// Every stuck claim, not only the ones the list above was capped at.
			const stuckClaims = await withCurrentTable(table, needs, (current) =>
				countStuckClaims(current, { firstSeenMinutesAgo: stuckAfterMinutes, now: stuck.now }),
			);
			out.push({
				json: {
					kind: 'summary',
					table: tableName,
					totalKeys: summary.totalKeys,
					keysByStatus: summary.keysByStatus,
					keysRepeatedLastDay: summary.keysRepeatedLastDay,
					oldestKey: summary.oldestKey,
					oldestFirstSeen: summary.oldestFirstSeen?.toISOString() ?? null,
					stuckClaims,
					leasesTracked: stuck.leasesTracked,
					at: summary.now.toISOString(),
				},
				pairedItem: { item: 0 },
			});
		}
		if (!stuck.leasesTracked) {
			out.push({
				json: {
					kind: 'no_lease_columns',
					table: tableName,
					message: `table ${tableName} has no lease columns (status, lease_until, claim_token): every claim in it is final when made, so none can be stuck`,
				},
				pairedItem: { item: 0 },
			});
		}
		for (const claim of stuck.claims) {
			out.push({
				json: {
					kind: 'stuck_claim',
					table: tableName,
					key: claim.key,
					firstSeen: claim.firstSeen.toISOString(),
					lastSeen: claim.lastSeen?.toISOString() ?? null,
					deliveries: claim.deliveries,
					leaseUntil: claim.leaseUntil?.toISOString() ?? null,
				},
				pairedItem: { item: 0 },
			});
		}
		// Parked events: never taken again by Take Due Events until Requeue Dead Letter, so a person must look.
		if (table.capabilities.events) {
			const { deadLetters } = await withCurrentTable(table, needs, (current) =>
				listDeadLetters(current, maxKeys),
			);
			for (const letter of deadLetters) {
				out.push({
					json: {
						kind: 'dead_letter',
						table: tableName,
						key: letter.key,
						attempts: letter.attempts,
						lastError: letter.lastError,
						deadAt: letter.deadAt.toISOString(),
						receivedAt: letter.receivedAt.toISOString(),
					},
					pairedItem: { item: 0 },
				});
			}
		}
		return [out];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
}
