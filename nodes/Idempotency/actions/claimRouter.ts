import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { KeepItemsWhere } from '../descriptions/polledItemProperties';
import { executeClaim } from './claim.operation';
import { isPolledItem } from './parameters/readScope';
import { executeWatermark } from './watermark.operation';

/** The claim node's two paths: a key per item (every key source), or a watermark per scope (polled items). */
export async function routeClaim(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const keep = isPolledItem(this)
		? (this.getNodeParameter('keepItemsWhere', 0, 'new') as KeepItemsWhere)
		: 'new';
	if (keep === 'new') return executeClaim.call(this);
	return executeWatermark.call(this, keep);
}
