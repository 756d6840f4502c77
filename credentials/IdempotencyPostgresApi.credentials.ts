import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/** The same fields users know from n8n's own Postgres credential. */
export class IdempotencyPostgresApi implements ICredentialType {
	name = 'idempotencyPostgresApi';

	displayName = 'Idempotency Postgres';

	icon = { light: 'file:idempotencyPostgres.svg', dark: 'file:idempotencyPostgres.dark.svg' } as const;

	documentationUrl = 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency#credential-idempotency-postgres';

	properties: INodeProperties[] = [
		{ displayName: 'Host', name: 'host', type: 'string', default: 'localhost' },
		{ displayName: 'Database', name: 'database', type: 'string', default: 'postgres' },
		{ displayName: 'User', name: 'user', type: 'string', default: 'postgres' },
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{
			displayName: 'Maximum Number of Connections',
			name: 'maxConnections',
			type: 'number',
			default: 10,
			description: 'Connections in the pool this credential shares across executions',
		},
		{
			displayName: 'SSL',
			name: 'ssl',
			type: 'options',
			options: [
				{ name: 'Allow', value: 'allow', description: 'Plain connection, TLS only if the server demands it' },
				{ name: 'Disable', value: 'disable' },
				{ name: 'Require', value: 'require' },
			],
			default: 'disable',
		},
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'ignoreSslIssues',
			type: 'boolean',
			default: false,
			description: 'Whether to connect even if the server certificate cannot be verified (self-signed)',
			displayOptions: { hide: { ssl: ['disable'] } },
		},
		{ displayName: 'Port', name: 'port', type: 'number', default: 5432 },
	];
}
