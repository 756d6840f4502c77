import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The secret a webhook provider signs with, and the one before it while a rotation is under way: kept in
 * n8n's encrypted credential store, never in node parameters or exported workflow JSON.
 */
export class IdempotencyWebhookSigningApi implements ICredentialType {
	name = 'idempotencyWebhookSigningApi';

	displayName = 'Webhook Signing Secret API';

	icon = {
		light: 'file:webhookSigningSecret.svg',
		dark: 'file:webhookSigningSecret.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency#webhook-signature';

	properties: INodeProperties[] = [
		{
			displayName: 'Secret',
			name: 'secret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				"Stripe and Standard Webhooks / Svix: the whsec_… signing secret (Standard Webhooks with asymmetric signatures: the whpk_… public key). GitHub: the webhook's secret. Shopify: the app's client secret. Slack: the signing secret. Twilio: the auth token.",
		},
		{
			displayName: 'Previous Secret',
			name: 'previousSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'While you rotate the secret: the old one, still accepted so no delivery signed before the switch is refused. Remove it when the rotation is over.',
		},
	];
}
