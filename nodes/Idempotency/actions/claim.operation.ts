import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { claimProperties, MAX_WAIT_SECONDS } from '../descriptions/claimProperties';
import { LONGEST_DURATION_SECONDS } from '../descriptions/durationLimit';
import { INBOX_DEFAULTS } from '../descriptions/inboxProperties';
import { EventSizeError, SettingError } from '../errors';
import { deriveKey, hasEventId } from '../key/deriveKey';
import { payloadFingerprint, type FingerprintMode } from '../key/fingerprint';
import type { DerivedKey, KeyRule } from '../key/keyRule';
import { presetKeyRule } from '../key/providerPresets';
import { claimBatch } from '../store/claims/claimBatch';
import { checkScopeKeeps } from '../store/claims/scopeHistory';
import { watermarkRef } from '../store/watermark/watermarkTable';
import { scopePrefix } from '../key/scope';
import type { ClaimMode, ClaimOutcome, ClaimRequest } from '../store/record/claimOutcome';
import { claimResult, isoFormatter } from '../store/record/idempotencyResult';
import { openClaimTable, withCurrentTable, type TableNeeds } from '../store/table/claimTable';
import { LEASE_CLAIM_COLUMNS } from '../store/table/tableSchema';
import { poolFor } from '../transport/poolRegistry';
import { itemFailure } from '../../shared/nodeError';
import { readChoice } from '../../shared/readChoice';
import { readRawBody } from '../../shared/rawBody';
import { newClaimId } from '../store/record/claimId';
import { databaseFailure, failedItem } from './failures/databaseFailure';
import { readSwitch } from './parameters/readSwitch';
import { readCredentials } from './parameters/readCredentials';
import { readNumber } from './parameters/readNumber';
import { readDedupeValue } from './parameters/readDedupeValue';
import { readKeptEvent, type KeptEventReader } from './parameters/readKeptEvent';
import { isPolledItem, readKeySource, readScope } from './parameters/readScope';
import { readCreateTable, readTableRef } from './parameters/readTableRef';
import { unclaimedItem, unclaimedRoute } from './failures/unclaimedItems';
import { DUPLICATE_OUTPUT, MISMATCH_OUTPUT, NEW_OUTPUT } from './claimOutputs';

/** Derives every item's key, claims them all in one round trip, and routes New / Duplicate (/ Mismatch). */
export async function executeClaim(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const fingerprintMode = readChoice<FingerprintMode>(
		this,
		claimProperties,
		'options.payloadFingerprint',
		0,
		'off',
	);
	const outputs: INodeExecutionData[][] = fingerprintMode === 'off' ? [[], []] : [[], [], []];
	if (items.length === 0) return outputs;

	const mode = readChoice<ClaimMode>(this, claimProperties, 'claimMode', 0, 'once');
	let leaseSeconds = 0;
	let waitSeconds = 0;
	if (mode === 'lease') {
		leaseSeconds = readNumber(this.getNodeParameter('leaseSeconds', 0, 300), 'Lease (Seconds)', {
			min: 1,
			max: LONGEST_DURATION_SECONDS,
		});
		waitSeconds = readNumber(
			this.getNodeParameter('waitSeconds', 0, 0),
			'Wait for Running Claim (Seconds)',
			{ min: 0, max: MAX_WAIT_SECONDS },
		);
	}
	const keptEvent: KeptEventReader | undefined = mode === 'lease' ? readKeptEvent(this) : undefined;
	let maxAttempts: number | undefined;
	if (keptEvent) {
		maxAttempts = readNumber(
			this.getNodeParameter('maxAttempts', 0, INBOX_DEFAULTS.maxAttempts),
			'Max Attempts',
			{ min: 1, max: 1000, integer: true },
		);
	}
	const ref = readTableRef(this);
	const createTable = readCreateTable(this);
	const countRepeats = readSwitch(
		this,
		'options.countRepeats',
		!isPolledItem(this),
		'Count Repeat Deliveries',
	);

	// Per keyed item: its index among the inputs, its key and what is claimed.
	const indexes: number[] = [];
	const derivedKeys: DerivedKey[] = [];
	const requests: ClaimRequest[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const json = items[index].json as Record<string, unknown>;
			const rule = readKeyRule(this, index);
			// The bytes are read (from n8n's binary store) only when the key or the fingerprint needs them.
			const needsBytes =
				keptEvent !== undefined ||
				fingerprintMode === 'rawBody' ||
				(rule.source === 'auto' && !hasEventId(json));
			const rawBody = needsBytes ? await readRawBody(this, items[index], index) : undefined;
			const input = { json, rawBody };
			const scope = readScope(this, index);
			const derived = deriveKey(input, rule, scope);
			requests.push({
				key: derived.key,
				fingerprint: payloadFingerprint(input, fingerprintMode),
				event: keptEvent?.(items[index], rawBody, scope),
			});
			derivedKeys.push(derived);
			indexes.push(index);
		} catch (error) {
			const message = itemFailure(this, error, index);
			// Too large to keep is a setting to raise (answer 5xx, the sender retries); anything else is the delivery's.
			const kind =
				error instanceof EventSizeError || error instanceof SettingError
					? 'configuration'
					: 'bad_delivery';
			pushUnclaimed(this, outputs, items, failedItem(message, kind, index));
		}
	}
	if (requests.length === 0) return outputs;

	const credentials = await readCredentials(this);
	let outcomes: ClaimOutcome[];
	const needs: TableNeeds = {
		createIfMissing: createTable,
		columns: mode === 'lease' ? LEASE_CLAIM_COLUMNS : [],
		privileges:
			countRepeats || mode === 'lease' ? ['SELECT', 'INSERT', 'UPDATE'] : ['SELECT', 'INSERT'],
		events: keptEvent !== undefined,
	};
	const options = {
		mode,
		leaseSeconds,
		countRepeats,
		claimId: newClaimId(),
		waitMs: waitSeconds * 1000,
		maxAttempts,
	};
	try {
		const pool = await poolFor(credentials);
		if (isPolledItem(this)) {
			const scope = readScope(this, indexes[0]);
			await checkScopeKeeps(pool, ref, watermarkRef(ref), scope, scopePrefix(scope), 'keys');
		}
		const table = await openClaimTable(pool, ref, needs);
		outcomes = await withCurrentTable(table, needs, (current) =>
			claimBatch(current, requests, options),
		);
	} catch (error) {
		const failed = databaseFailure(this, error, credentials, indexes, true);
		for (const item of failed) pushUnclaimed(this, outputs, items, item);
		return outputs;
	}

	const iso = isoFormatter();
	const mismatchOutput = fingerprintMode === 'off' ? DUPLICATE_OUTPUT : MISMATCH_OUTPUT;
	for (let position = 0; position < requests.length; position++) {
		const outcome = outcomes[position];
		const index = indexes[position];
		const source = items[index];
		const routed: INodeExecutionData = {
			json: {
				...source.json,
				idempotency: claimResult(derivedKeys[position], outcome, iso) as IDataObject,
			},
			pairedItem: { item: index },
		};
		if (source.binary) routed.binary = source.binary;
		const output = outcome.won ? NEW_OUTPUT : outcome.mismatch ? mismatchOutput : DUPLICATE_OUTPUT;
		outputs[output].push(routed);
	}
	return outputs;
}

/** Every input item, failed with this message where each Continue setting keeps it off New. */
export function allUnclaimed(context: IExecuteFunctions, error: Error): INodeExecutionData[][] {
	const items = context.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	items.forEach((_, index) =>
		pushUnclaimed(context, outputs, items, failedItem(error.message, 'configuration', index)),
	);
	return outputs;
}

function pushUnclaimed(
	context: IExecuteFunctions,
	outputs: INodeExecutionData[][],
	items: INodeExecutionData[],
	failed: INodeExecutionData,
): void {
	const route = unclaimedRoute(context);
	const source = items[(failed.pairedItem as { item: number }).item];
	outputs[route === 'duplicate' ? DUPLICATE_OUTPUT : NEW_OUTPUT].push(
		unclaimedItem(route, failed, source),
	);
}

function readKeyRule(context: IExecuteFunctions, index: number): KeyRule {
	const source = readKeySource(context, index);
	switch (source) {
		case 'header':
			return { source, headerName: context.getNodeParameter('headerName', index) as string };
		case 'field':
			return { source, fieldPath: context.getNodeParameter('fieldPath', index) as string };
		case 'expression':
			return { source, value: context.getNodeParameter('keyExpression', index) };
		case 'polled':
			return { source, value: readDedupeValue(context, index) };
		case 'preset':
			return presetKeyRule(context.getNodeParameter('keyPreset', index, 'stripe') as string);
		case 'auto':
			return { source };
	}
}
