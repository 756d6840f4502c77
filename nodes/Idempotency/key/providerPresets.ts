import { KeyError } from '../errors';
import type { KeyRule } from './keyRule';

/** Where each provider puts the id that stays the same on every redelivery of one event. */
export interface ProviderKeyPreset {
	value: string;
	name: string;
	rule: KeyRule;
	/** Shown in the node: the id's source, and when two workflows sharing a table need a Scope. */
	description: string;
}

/** Sorted by name, as n8n lists options. */
export const PROVIDER_KEY_PRESETS: readonly ProviderKeyPreset[] = [
	{
		value: 'github',
		name: 'GitHub',
		rule: { source: 'header', headerName: 'X-GitHub-Delivery' },
		description: 'X-GitHub-Delivery: the same GUID on every redelivery; each webhook gets its own',
	},
	{
		value: 'idempotencyKey',
		name: 'Idempotency-Key Header (HTTP APIs)',
		rule: { source: 'header', headerName: 'Idempotency-Key', structuredString: true },
		description:
			"The Idempotency-Key request header an API caller sends (IETF draft, quoted or bare). Keys are chosen by callers: give each endpoint its own Scope, and add the caller's identity to it when callers are not trusted to keep their keys apart.",
	},
	{
		value: 'shopify',
		name: 'Shopify',
		rule: { source: 'header', headerName: 'X-Shopify-Event-Id' },
		description:
			'X-Shopify-Event-ID. One event can reach several subscriptions with the same ID: give each workflow its own Scope, e.g. the X-Shopify-Topic header.',
	},
	{
		value: 'slack',
		name: 'Slack',
		rule: { source: 'field', fieldPath: 'body.event_id' },
		description:
			'Body event_id (Events API). If one table serves several Slack apps, give each app its own Scope.',
	},
	{
		value: 'standardWebhooks',
		name: 'Standard Webhooks',
		rule: { source: 'header', headerName: 'webhook-id' },
		description:
			'Webhook-ID. A message sent to several endpoints keeps its ID: give each endpoint its own Scope.',
	},
	{
		value: 'stripe',
		name: 'Stripe',
		rule: { source: 'field', fieldPath: 'body.id' },
		description:
			'Body ID (evt_…). Every endpoint subscribed to the event gets the same ID: give each endpoint its own Scope.',
	},
	{
		value: 'svix',
		name: 'Svix',
		rule: { source: 'header', headerName: 'svix-id' },
		description:
			'Svix-ID. A message sent to several endpoints keeps its ID: give each endpoint its own Scope.',
	},
];

export function presetKeyRule(value: string): KeyRule {
	const preset = PROVIDER_KEY_PRESETS.find((candidate) => candidate.value === value);
	if (!preset) {
		throw new KeyError(
			`unknown provider preset "${value}"; one of ${PROVIDER_KEY_PRESETS.map((candidate) => candidate.value).join(', ')}`,
		);
	}
	return preset.rule;
}
