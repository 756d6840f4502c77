import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/** The same fields users know from n8n's own Postgres credential. */
export class IdempotencyPostgresApi implements ICredentialType {
	name = 'idempotencyPostgresApi';

	displayName = 'Idempotency Postgres';

	icon = {
		light: 'file:idempotencyPostgres.svg',
		dark: 'file:idempotencyPostgres.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency#credential-idempotency-postgres';

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
				{
					name: 'Allow',
					value: 'allow',
					description: 'Plain connection, TLS only if the server accepts nothing else',
				},
				{ name: 'Disable', value: 'disable' },
				{
					name: 'Require',
					value: 'require',
					description: "TLS, with the server's certificate checked unless SSL issues are ignored",
				},
			],
			default: 'disable',
		},
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'ignoreSslIssues',
			type: 'boolean',
			default: false,
			description:
				'Whether to connect even if the server certificate cannot be verified (self-signed)',
			displayOptions: { hide: { ssl: ['disable'] } },
		},
		{
			displayName: 'CA Certificate',
			name: 'caCertificate',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				"PEM of the CA that signed the server's certificate (your provider's root or bundle). Empty: the CAs Node.js trusts. The host name must match the certificate.",
			displayOptions: { show: { ssl: ['allow', 'require'], ignoreSslIssues: [false] } },
		},
		{
			displayName: 'Client Certificate',
			name: 'clientCertificate',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'PEM certificate for servers that authenticate users by certificate; leave empty otherwise',
			displayOptions: { show: { ssl: ['allow', 'require'] } },
		},
		{
			displayName: 'Client Private Key',
			name: 'clientPrivateKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: 'PEM private key of the client certificate, without a passphrase',
			displayOptions: { show: { ssl: ['allow', 'require'] } },
		},
		{ displayName: 'Port', name: 'port', type: 'number', default: 5432 },
	];
}
