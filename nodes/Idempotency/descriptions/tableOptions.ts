import type { INodeProperties } from 'n8n-workflow';

/** Schema and table options shared by both nodes, so both always talk about the same table. */
export const tableOptions: INodeProperties[] = [
	{
		displayName: 'Schema',
		name: 'schema',
		type: 'string',
		default: 'public',
		description: 'Schema of the claim table. Letters, digits and underscores only.',
	},
	{
		displayName: 'Table',
		name: 'table',
		type: 'string',
		default: 'processed_events',
		description: 'Table that holds one row per claimed key. Letters, digits and underscores only.',
	},
];

export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_TABLE = 'processed_events';
