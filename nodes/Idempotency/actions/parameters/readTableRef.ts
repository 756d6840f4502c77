import type { IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_SCHEMA, DEFAULT_TABLE } from '../../descriptions/tableOptions';
import { tableRef, type TableRef } from '../../store/table/tableRef';
import { readSwitch } from './readSwitch';

/** The table every item of an execution uses (read once: one execution talks to one table). */
export function readTableRef(context: IExecuteFunctions): TableRef {
	const schema = context.getNodeParameter('options.schema', 0, DEFAULT_SCHEMA) as string;
	const table = context.getNodeParameter('options.table', 0, DEFAULT_TABLE) as string;
	return tableRef(schema, table);
}

/** Create Table If Missing, on by default: whether the node makes the tables it needs when they are absent. */
export function readCreateTable(context: IExecuteFunctions): boolean {
	return readSwitch(context, 'options.createTable', true, 'Create Table If Missing');
}
