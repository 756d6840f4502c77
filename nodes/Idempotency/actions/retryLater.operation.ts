import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { itemFailure } from '../../shared/nodeError';
import { LONGEST_DURATION_SECONDS } from '../descriptions/durationLimit';
import { INBOX_DEFAULTS } from '../descriptions/inboxProperties';
import { MappedValueError, NoKeptEventError } from '../errors';
import { idValueToString } from '../key/deriveKey';
import {
	KEPT_EVENT_UPDATE_NEEDS,
	openClaimTable,
	withCurrentTable,
} from '../store/table/claimTable';
import { retryLater, type Backoff, type RetryLaterRequest } from '../store/inbox/inbox';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure, failedItem } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readSwitch } from './parameters/readSwitch';
import { readEachItem } from './parameters/readEachItem';
import { readNumber } from './parameters/readNumber';
import { readTableRef } from './parameters/readTableRef';
import { operationResult } from '../store/record/idempotencyResult';

/** Longest last error kept with an event: enough to act on, never a whole stack or payload. */
const MAX_ERROR_CHARS = 2000;

/**
 * Text Postgres can hold, at most `maxUnits` UTF-16 units: a NUL (which text cannot hold: it would fail the
 * statement, and the error would go unrecorded) is written `\0`, and the cut never halves a character.
 */
function storableText(text: string, maxUnits: number): string {
	const written = text.replaceAll('\u0000', '\\0');
	if (written.length <= maxUnits) return written;
	const cut = written.slice(0, maxUnits);
	return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * For the business step's error branch: the claim and its kept event stay, the error is recorded, and the
 * event is due again after the backoff (Take Due Events runs it then), or parked after Max Attempts.
 */
export async function executeRetryLater(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const maxAttempts = readNumber(
		this.getNodeParameter('maxAttempts', 0, INBOX_DEFAULTS.maxAttempts),
		'Max Attempts',
		{ min: 1, max: 1000, integer: true },
	);
	const read = (name: keyof Backoff, label: string, limits: { min: number; max?: number }) =>
		readNumber(this.getNodeParameter(`backoff.${name}`, 0, INBOX_DEFAULTS[name]), label, limits);
	const backoff: Backoff = {
		baseSeconds: read('baseSeconds', 'Base (Seconds)', { min: 0, max: LONGEST_DURATION_SECONDS }),
		factor: read('factor', 'Factor', { min: 1 }),
		capSeconds: read('capSeconds', 'Cap (Seconds)', { min: 0, max: LONGEST_DURATION_SECONDS }),
		jitter: read('jitter', 'Jitter', { min: 0, max: 1 }),
	};
	// Read once: Delay and Count as an Attempt shape the operation; the delay's seconds may differ per item.
	const givenDelay = this.getNodeParameter('delay', 0, 'backoff') === 'perItem';
	const countsAsAttempt = readSwitch(this, 'countAttempt', true, 'Count as an Attempt');
	const { read: requests, failed: out } = readEachItem(this, (index): RetryLaterRequest => {
		const key = idValueToString(this.getNodeParameter('key', index), 'the key');
		const claimId = idValueToString(this.getNodeParameter('claimId', index, ''), 'the claim ID');
		if (key === undefined || claimId === undefined)
			throw new MappedValueError(
				"the key or the Claim ID is empty: map idempotency.key and idempotency.claimId from the Idempotency Claim node's New output (or from Take Due Events)",
			);
		const error = storableText(
			String(this.getNodeParameter('errorMessage', index, '') ?? ''),
			MAX_ERROR_CHARS,
		);
		const delaySeconds = givenDelay
			? readNumber(this.getNodeParameter('delaySeconds', index), 'Delay (Seconds)', {
					min: 0,
					max: LONGEST_DURATION_SECONDS,
				})
			: undefined;
		return {
			key,
			claimId,
			error: error || 'the business step failed',
			delaySeconds,
			countsAsAttempt,
		};
	});
	if (requests.length === 0) return [out];

	const credentials = await readCredentials(this);
	const needs = KEPT_EVENT_UPDATE_NEEDS;
	let results: Awaited<ReturnType<typeof retryLater>>;
	try {
		const table = await openClaimTable(await poolFor(credentials), readTableRef(this), needs);
		results = await withCurrentTable(table, needs, (current) =>
			retryLater(current, requests, maxAttempts, backoff),
		);
	} catch (error) {
		const indexes = requests.map((request) => request.index);
		return [[...out, ...databaseFailure(this, error, credentials, indexes, true)]];
	}
	requests.forEach((request, position) => {
		const { state, attempts, dueAt } = results[position];
		if (state === 'no_event') {
			const noEvent = new NoKeptEventError(
				`the claim of "${request.key}" keeps no event, so there is nothing to retry from Postgres: turn on Keep Event on the Idempotency Claim node (Claim With Lease), or use Release`,
			);
			out.push(
				failedItem(itemFailure(this, noEvent, request.index), 'configuration', request.index),
			);
			return;
		}
		out.push({
			json: {
				...items[request.index].json,
				idempotency: operationResult(
					items[request.index].json.idempotency,
					request.key,
					'retryLater',
					{
						// scheduled, dead_letter, or not_held (completed, released or taken over by another run).
						status: state,
						attempts,
						dueAt: dueAt?.toISOString() ?? null,
						lastError: request.error,
					},
				) as IDataObject,
			},
			pairedItem: { item: request.index },
		});
	});
	return [out];
}
