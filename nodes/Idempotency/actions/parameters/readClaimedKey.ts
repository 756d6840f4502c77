import type { IExecuteFunctions } from 'n8n-workflow';

import { MappedValueError } from '../../errors';
import { idValueToString } from '../../key/deriveKey';

/**
 * The item's claimed Key and Claim ID, mapped from the claim node's item. `holderOnly` names an operation
 * that acts for the claim's holder alone, which therefore needs the Claim ID.
 */
export function readClaimedKey(
	context: IExecuteFunctions,
	index: number,
	holderOnly?: string,
): { key: string; claimId: string | null } {
	const key = idValueToString(context.getNodeParameter('key', index), 'the key');
	if (key === undefined)
		throw new MappedValueError(
			'the key is empty; map it from the claim node, e.g. {{ $json.idempotency.key }}',
		);
	const claimId =
		idValueToString(context.getNodeParameter('claimId', index, ''), 'the claim ID') ?? null;
	if (holderOnly !== undefined && claimId === null) {
		throw new MappedValueError(
			`the Claim ID is empty. ${holderOnly} only for the execution that holds it: map idempotency.claimId from ` +
				"the Idempotency Claim node's New output (Duplicate and Mismatch items hold no claim)",
		);
	}
	return { key, claimId };
}
