import type { INodeProperties } from 'n8n-workflow';

export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_TABLE = 'processed_events';

/** Schema and table options shared by both nodes, so both always talk about the same table. */
export const tableOptions: INodeProperties[] = [
	{
		displayName: 'Schema',
		name: 'schema',
		type: 'string',
		default: DEFAULT_SCHEMA,
		description: 'Schema of the claim table. Letters, digits and underscores only.',
	},
	{
		displayName: 'Table',
		name: 'table',
		type: 'string',
		default: DEFAULT_TABLE,
		description: 'Table that holds one row per claimed key. Letters, digits and underscores only.',
	},
];
