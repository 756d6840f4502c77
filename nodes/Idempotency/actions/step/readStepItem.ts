import type { IExecuteFunctions } from 'n8n-workflow';

import { MappedValueError } from '../../errors';
import { idValueToString } from '../../key/deriveKey';
import { stepName } from '../../step/stepName';

/** One item's step: its event's key and the step's name (and the claim ID where the operation needs it). */
export function readStep(context: IExecuteFunctions, index: number): { key: string; step: string } {
	const step = stepName(context.getNodeParameter('stepName', index, ''));
	const key = idValueToString(context.getNodeParameter('key', index, ''), 'the key');
	if (key === undefined)
		throw new MappedValueError(
			"the key is empty; map idempotency.key from the Idempotency Claim node's New output, e.g. {{ $('Idempotency Claim').item.json.idempotency.key }}",
		);
	return { key, step };
}

export function readClaimId(context: IExecuteFunctions, index: number): string {
	const claimId = idValueToString(context.getNodeParameter('claimId', index, ''), 'the claim ID');
	if (claimId === undefined)
		throw new MappedValueError(
			"the Claim ID is empty: only the claim's holder starts or finishes a step; map idempotency.claimId from the Idempotency Claim node's New output (Claim With Lease)",
		);
	return claimId;
}
