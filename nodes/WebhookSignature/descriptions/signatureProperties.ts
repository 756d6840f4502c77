import type { INodeProperties } from 'n8n-workflow';

import { binaryPropertyOption } from '../../shared/rawBody';

const TIMESTAMPED_SCHEMES = ['stripe', 'slack', 'standardWebhooks', 'svix', 'genericHmac'];
const showForGeneric = { show: { scheme: ['genericHmac'] } };

export const signatureProperties: INodeProperties[] = [
	{
		displayName: 'Scheme',
		name: 'scheme',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Generic HMAC',
				value: 'genericHmac',
				description:
					'Any HMAC signature: header, algorithm, encoding, prefix, optional timestamp, signed content',
			},
			{
				name: 'GitHub',
				value: 'github',
				description: 'X-Hub-Signature-256: sha256=&lt;hex&gt; over the raw body',
			},
			{
				name: 'Shopify',
				value: 'shopify',
				description: 'X-Shopify-Hmac-Sha256: base64 HMAC-SHA256 of the raw body',
			},
			{
				name: 'Slack',
				value: 'slack',
				description: 'X-Slack-Signature: v0=&lt;hex&gt; over v0:{timestamp}:{body}',
			},
			{
				name: 'Standard Webhooks',
				value: 'standardWebhooks',
				description:
					'Webhook-ID, Webhook-Timestamp, Webhook-Signature: v1 (secret whsec_…) or v1a Ed25519 (public key whpk_…)',
			},
			{
				name: 'Stripe',
				value: 'stripe',
				description: 'Stripe-Signature: t=…,v1=&lt;hex&gt; over {t}.{body}; any v1 may match',
			},
			{
				name: 'Svix',
				value: 'svix',
				description: 'Standard Webhooks with Svix-ID, Svix-Timestamp, Svix-Signature headers',
			},
			{
				name: 'Twilio',
				value: 'twilio',
				description:
					'X-Twilio-Signature: HMAC-SHA1 of the public URL and the sorted form parameters (or bodySHA256 for JSON)',
			},
		],
		default: 'stripe',
	},
	{
		displayName: 'Tolerance (Seconds)',
		name: 'toleranceSeconds',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 300,
		description:
			'How far the signed timestamp may lie from now, either way. Older is refused as a replay, newer as a clock problem. A replay inside the window is stopped by the Idempotency Claim node.',
		displayOptions: { show: { scheme: TIMESTAMPED_SCHEMES } },
	},
	{
		displayName: 'Public URL',
		name: 'publicUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://n8n.example.com/webhook/twilio-sms',
		description:
			'The URL exactly as configured in Twilio (with its query string, if any). Twilio signs it, and n8n behind a proxy does not know it.',
		displayOptions: { show: { scheme: ['twilio'] } },
	},
	{
		displayName: 'Signature Header',
		name: 'signatureHeader',
		type: 'string',
		default: 'X-Signature',
		description: 'Header that carries the signature (case-insensitive)',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Algorithm',
		name: 'algorithm',
		type: 'options',
		options: [
			{ name: 'SHA-1', value: 'sha1' },
			{ name: 'SHA-256', value: 'sha256' },
			{ name: 'SHA-512', value: 'sha512' },
		],
		default: 'sha256',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Encoding',
		name: 'encoding',
		type: 'options',
		options: [
			{ name: 'Hex', value: 'hex' },
			{ name: 'Base64', value: 'base64' },
		],
		default: 'hex',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Prefix',
		name: 'prefix',
		type: 'string',
		default: '',
		placeholder: 'sha256=',
		description: 'Text before the digest in the header; empty for none',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Timestamp Header',
		name: 'timestampHeader',
		type: 'string',
		default: '',
		placeholder: 'X-Timestamp',
		description:
			'Header with the signed Unix timestamp in seconds; empty if the sender signs none (then no replay window is checked)',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Signed Content',
		name: 'signedContent',
		type: 'string',
		default: '{body}',
		placeholder: '{timestamp}.{body}',
		description:
			'What the sender signs: literal text with {body} (the exact raw bytes), {timestamp} and {header:Name} placeholders',
		displayOptions: showForGeneric,
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [binaryPropertyOption],
	},
];
