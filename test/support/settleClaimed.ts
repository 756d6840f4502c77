import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { executeContext } from '../../harness/node/executeContext';

const keyNode = new IdempotencyKey();

/** Complete or Release through the Key node, with the Key and Claim ID taken from the claim node's item. */
export function settleClaimed(
	operation: 'complete' | 'release',
	claimed: INodeExecutionData,
	{ table, credentials }: { table: string; credentials: object },
): Promise<INodeExecutionData[][]> {
	return keyNode.execute.call(
		executeContext([claimed], {
			parameters: { operation, options: { table } },
			nodeType: 'idempotencyKey',
			perItem: (name) =>
				name === 'key' || name === 'claimId'
					? (claimed.json.idempotency as IDataObject)[name]
					: undefined,
			credentials,
		}),
	);
}
