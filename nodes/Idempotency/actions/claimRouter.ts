import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { polledItemProperties, type KeepItemsWhere } from '../descriptions/polledItemProperties';
import { readChoice } from '../../shared/readChoice';
import { executeClaim } from './claim.operation';
import { isPolledItem } from './parameters/readScope';
import { executeWatermark } from './watermark.operation';

/** The claim node's two paths: a key per item (every key source), or a watermark per scope (polled items). */
export async function routeClaim(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const keep = isPolledItem(this)
		? readChoice<KeepItemsWhere>(this, polledItemProperties, 'keepItemsWhere', 0, 'new')
		: 'new';
	if (keep === 'new') return executeClaim.call(this);
	return executeWatermark.call(this, keep);
}
