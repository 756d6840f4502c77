import type { IExecuteFunctions } from 'n8n-workflow';

import { readNumber } from './readNumber';

/** Rows per DELETE statement (Purge's parameter, which Clear Deduplication History shows too). */
export function readBatchSize(context: IExecuteFunctions): number {
	return readNumber(context.getNodeParameter('batchSize', 0, 10000), 'Batch Size', {
		min: 1,
		max: 100000,
		integer: true,
	});
}
