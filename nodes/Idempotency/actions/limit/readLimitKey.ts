import type { IExecuteFunctions } from 'n8n-workflow';

import { MappedValueError } from '../../errors';
import { idValueToString, storableKeyValue } from '../../key/deriveKey';

/** An item's Limit Key as stored: refused when empty, hashed when Postgres could not index it as it is. */
export function readLimitKey(context: IExecuteFunctions, index: number): string {
	const value = idValueToString(context.getNodeParameter('limitKey', index), 'the limit key');
	if (value === undefined) throw new MappedValueError('the limit key is empty');
	return storableKeyValue(value);
}
