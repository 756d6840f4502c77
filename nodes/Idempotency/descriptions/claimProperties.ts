import type { INodeProperties } from 'n8n-workflow';

import { PROVIDER_KEY_PRESETS } from '../key/providerPresets';
import { binaryPropertyOption } from '../../shared/rawBody';
import { tableOptions } from './tableOptions';

export const claimProperties: INodeProperties[] = [
	{
		displayName: 'Key Source',
		name: 'keySource',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Event ID, Else Body Hash',
				value: 'auto',
				// Literal key prefixes and the JSON field name, which the casing autofixes would turn into "body.ID"
				// and "sha256-JSON:": users compare them with the keys they see.
				// eslint-disable-next-line n8n-nodes-base/node-param-description-miscased-id, n8n-nodes-base/node-param-description-miscased-json
				description:
					'Key is evt: + body.id; with no ID, sha256: + hash of the raw request bytes, else sha256-json: + hash of the canonical JSON body',
			},
			{ name: 'Expression', value: 'expression', description: 'Any value you compute' },
			{ name: 'Field', value: 'field', description: 'Any field of the item, by path' },
			{
				name: 'Header',
				value: 'header',
				description: 'A delivery-ID header such as Webhook-ID or X-GitHub-Delivery',
			},
			{
				name: 'Provider Preset',
				value: 'preset',
				description: "Where a known provider puts its event's ID (Stripe, GitHub, Shopify, …)",
			},
		],
		default: 'auto',
		hint: "Event ID, Else Body Hash: an event without an ID is keyed by its exact request bytes only when the Webhook node's Raw Body option is on (otherwise by its canonical JSON)",
	},
	{
		displayName: 'Provider',
		name: 'keyPreset',
		type: 'options',
		options: PROVIDER_KEY_PRESETS.map(({ name, value, description }) => ({
			name,
			value,
			description,
		})),
		default: 'stripe',
		displayOptions: { show: { keySource: ['preset'] } },
	},
	{
		displayName: 'Header Name',
		name: 'headerName',
		type: 'string',
		default: 'webhook-id',
		placeholder: 'x-github-delivery',
		description:
			'Case-insensitive. Standard Webhooks: Webhook-ID; Svix: Svix-ID; GitHub: X-GitHub-Delivery; Shopify: X-Shopify-Event-ID.',
		displayOptions: { show: { keySource: ['header'] } },
	},
	{
		displayName: 'Field Path',
		name: 'fieldPath',
		type: 'string',
		default: 'body.data.id',
		placeholder: 'body.event.uuid',
		description: 'Dot path into the item JSON; [0] selects an array element',
		displayOptions: { show: { keySource: ['field'] } },
	},
	{
		displayName: 'Key',
		name: 'keyExpression',
		type: 'string',
		default: '',
		placeholder: '={{ $json.body.type + ":" + $json.body.data.uuid }}',
		description: 'The key itself, used as is (a string or a number)',
		displayOptions: { show: { keySource: ['expression'] } },
	},
	{
		displayName: 'Claim Mode',
		name: 'claimMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Claim Once',
				value: 'once',
				description:
					'INSERT … ON CONFLICT DO NOTHING: the first delivery wins and the claim is final',
			},
			{
				name: 'Claim With Lease',
				value: 'lease',
				description:
					'The claim is "processing" until an Idempotency Key node completes it; if the execution dies, the lease expires and a retry can claim it again',
			},
		],
		default: 'once',
		hint: 'Claim Once: if the business step fails, every retry is a Duplicate unless an Idempotency Key node releases the key. Claim With Lease also lets a retry take over when the execution dies.',
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 300,
		description: 'How long a claim stays "processing" before a retry may take it over',
		hint: 'Must outlast your slowest business step: a retry that arrives after the lease ran out takes the claim over and runs the step a second time',
		displayOptions: { show: { claimMode: ['lease'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			binaryPropertyOption,
			{
				displayName: 'Count Repeat Deliveries',
				name: 'countRepeats',
				type: 'boolean',
				default: true,
				description:
					'Whether a repeat delivery updates last_seen and deliveries. Off, a repeat under Claim Once only reads, which is cheaper when retries are frequent. Claim With Lease always counts.',
			},
			{
				displayName: 'Create Table If Missing',
				name: 'createTable',
				type: 'boolean',
				default: true,
				description:
					'Whether to create the table, or add missing columns to an existing one, once per connection pool. Never drops or rewrites anything.',
			},
			{
				displayName: 'Payload Fingerprint',
				name: 'payloadFingerprint',
				type: 'options',
				options: [
					{ name: 'Off', value: 'off' },
					{
						name: 'Canonical JSON',
						value: 'canonicalJson',
						description:
							'Hash of the body with sorted keys: whitespace and key order do not matter',
					},
					{ name: 'Raw Bytes', value: 'rawBody', description: 'Hash of the exact request bytes' },
				],
				default: 'off',
				description:
					'Store a hash of the payload with the key. A later delivery with the same key but a different payload goes to a third output, Mismatch.',
			},
			{
				displayName: 'Scope',
				name: 'scope',
				type: 'string',
				default: '',
				placeholder: 'billing',
				description: 'Prefix for every key, so two workflows can each process the same event once',
			},
			...tableOptions,
		],
	},
];
