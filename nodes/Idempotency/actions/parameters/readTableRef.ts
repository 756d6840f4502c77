import type { IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_SCHEMA, DEFAULT_TABLE } from '../../descriptions/tableOptions';
import { tableRef, type TableRef } from '../../store/table/tableRef';

/** The table every item of an execution uses (read once: one execution talks to one table). */
export function readTableRef(context: IExecuteFunctions): TableRef {
	const schema = context.getNodeParameter('options.schema', 0, DEFAULT_SCHEMA) as string;
	const table = context.getNodeParameter('options.table', 0, DEFAULT_TABLE) as string;
	return tableRef(schema, table);
}
