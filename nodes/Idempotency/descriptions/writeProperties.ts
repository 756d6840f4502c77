import type { INodeProperties } from 'n8n-workflow';

const WRITING = { show: { operation: ['completeWithWrite'] } };

/** Complete With Write's own parameters: the business write it commits with the Complete. */
export const writeProperties: INodeProperties[] = [
	{
		displayName:
			"The write runs in the claim table's database, in one transaction with the Complete: if this execution no longer holds the claim (its lease ended and a retry took it over), nothing is written",
		name: 'writeNotice',
		type: 'notice',
		default: '',
		displayOptions: WRITING,
	},
	{
		displayName: 'Query',
		name: 'query',
		type: 'string',
		typeOptions: { editor: 'sqlEditor', sqlDialect: 'PostgreSQL' },
		default: '',
		placeholder: 'INSERT INTO orders (event_id, amount) VALUES ($1, $2)',
		description:
			"One SQL statement, the business write. Pass the item's values as Query Parameters ($1, $2, …), never inside the text. Add RETURNING to get rows back under idempotency.write.rows.",
		noDataExpression: true,
		required: true,
		displayOptions: WRITING,
	},
	{
		displayName: 'Query Parameters',
		name: 'queryParameters',
		type: 'string',
		default: '',
		placeholder: '={{ [$json.body.ID, $json.body.amount] }}',
		description: 'A list of values for $1, $2, … in order, as an expression that gives an array',
		displayOptions: WRITING,
	},
];
