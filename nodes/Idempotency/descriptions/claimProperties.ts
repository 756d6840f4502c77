import type { INodeProperties } from 'n8n-workflow';

import { PROVIDER_KEY_PRESETS } from '../key/providerPresets';
import { binaryPropertyOption } from '../../shared/rawBody';
import { LONGEST_DURATION_SECONDS } from './durationLimit';
import { maxAttemptsProperty } from './inboxProperties';
import { polledItemProperties } from './polledItemProperties';
import { tableOptions } from './tableOptions';

const WATERMARK = { keepItemsWhere: ['higher', 'later'] };

/** The longest a repeat may wait for a running claim: an HTTP caller is rarely still listening after that. */
export const MAX_WAIT_SECONDS = 300;

/** Max Event Size: the default, and the most a kept event may be (Postgres' bytea would take 1 GiB). */
export const DEFAULT_MAX_EVENT_KIB = 256;
export const MAX_EVENT_KIB_LIMIT = 10240;

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
				name: 'Polled Item',
				value: 'polled',
				description:
					'An item a schedule hands over again on every run (RSS, an API list): pass it where its value is new, higher or a later date, as Remove Duplicates does',
			},
			{
				name: 'Provider Preset',
				value: 'preset',
				description: "Where a known provider puts its event's ID (Stripe, GitHub, Shopify, …)",
			},
		],
		default: 'auto',
	},
	// A field's hint is one text whatever option is selected, so each key source that needs a word of
	// warning gets a notice of its own, shown only while that source is selected.
	{
		displayName:
			"An event without an ID is keyed by its exact request bytes only when the Webhook node's Raw Body option is on (otherwise by its canonical JSON)",
		name: 'eventIdKeyNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { keySource: ['auto'] } },
	},
	{
		displayName:
			"A delivery without the provider's event ID is not claimed: it fails naming the item, and on the error output carries error: bad_delivery (answer 400)",
		name: 'presetKeyNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { keySource: ['preset'] } },
	},
	{
		displayName:
			'A header sent more than once is refused (n8n joins the repeats with ", "), never claimed under the joined value',
		name: 'headerKeyNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { keySource: ['header'] } },
	},
	...polledItemProperties,
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
		displayOptions: { hide: WATERMARK },
		hint: 'Claim Once: if the business step fails, every retry is a Duplicate unless an Idempotency Key node releases the key. Claim With Lease also lets a retry take over when the execution dies.',
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: LONGEST_DURATION_SECONDS },
		default: 300,
		description: 'How long a claim stays "processing" before a retry may take it over',
		hint: 'Must outlast your slowest business step: a retry that arrives after the lease ran out takes the claim over and runs the step a second time',
		displayOptions: { show: { claimMode: ['lease'] }, hide: WATERMARK },
	},
	{
		displayName: 'Wait for Running Claim (Seconds)',
		name: 'waitSeconds',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: MAX_WAIT_SECONDS },
		default: 0,
		description:
			'When another execution is still processing the key, wait up to this long for it: Complete → Duplicate with its stored response; Release or an expired lease → this delivery takes the claim (New). 0: go to Duplicate (in progress) at once.',
		hint: 'A waiting execution keeps its HTTP request open and looks at the claim every 10–50 ms, holding no database connection; callers of an API retry on a timeout, providers usually wait 10–30 s',
		displayOptions: { show: { claimMode: ['lease'] }, hide: WATERMARK },
	},
	{
		displayName: 'Keep Event',
		name: 'keepEvent',
		type: 'boolean',
		default: false,
		description:
			'Whether to keep the delivery (its raw body, content type and the headers named below) with the claim, in the same statement, until Complete drops it. Retry Later and Take Due Events then run it again from Postgres, whether or not the sender retries.',
		hint: "Kept bytes may hold personal data: they stay only while the event is in flight (or parked as a dead letter), and Complete, Release, Purge and Clear delete them. Needs the Webhook node's Raw Body option for the exact bytes.",
		displayOptions: { show: { claimMode: ['lease'] }, hide: WATERMARK },
	},
	{
		displayName: 'Headers to Keep',
		name: 'keptHeaders',
		type: 'string',
		default: '',
		placeholder: 'x-github-event, x-github-delivery',
		description:
			'Comma-separated header names kept with the event (lower-cased); the content type is always kept. Keep what the business step reads, not secrets or signatures.',
		displayOptions: { show: { claimMode: ['lease'], keepEvent: [true] }, hide: WATERMARK },
	},
	maxAttemptsProperty({
		show: { claimMode: ['lease'], keepEvent: [true] },
		hide: WATERMARK,
	}),
	{
		displayName: 'Max Event Size (KiB)',
		name: 'maxEventKib',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: MAX_EVENT_KIB_LIMIT },
		default: DEFAULT_MAX_EVENT_KIB,
		description:
			'A larger event is refused with its size named, and nothing is claimed, so the sender can retry once the limit is raised',
		displayOptions: { show: { claimMode: ['lease'], keepEvent: [true] }, hide: WATERMARK },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{ ...binaryPropertyOption, displayOptions: { hide: { '/keySource': ['polled'] } } },
			{
				displayName: 'Count Repeat Deliveries',
				name: 'countRepeats',
				type: 'boolean',
				default: true,
				description:
					'Whether a repeat delivery updates last_seen and deliveries. Off, a repeat under Claim Once only reads, which is cheaper when retries are frequent. Claim With Lease always counts.',
				displayOptions: { hide: { '/keySource': ['polled'] } },
			},
			{
				// Off for polled items: a poll repeats most of its items every run, and off, a repeat writes nothing.
				displayName: 'Count Repeat Deliveries',
				name: 'countRepeats',
				type: 'boolean',
				default: false,
				description:
					'Whether a repeated item updates last_seen and deliveries. Off (the default for polled items), a repeat under Claim Once only reads: a poll that hands over 990 known items writes no row for them.',
				displayOptions: { show: { '/keySource': ['polled'], '/keepItemsWhere': ['new'] } },
			},
			{
				displayName: 'Create Table If Missing',
				name: 'createTable',
				type: 'boolean',
				default: true,
				description:
					'Whether to create the table (and its _watermarks table, for a watermark), or add missing columns to an existing one, once per connection pool. Never drops or rewrites anything.',
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
				displayOptions: { hide: { '/keepItemsWhere': ['higher', 'later'] } },
			},
			{
				displayName: 'Scope',
				name: 'scope',
				type: 'string',
				default: '',
				placeholder: 'billing',
				description:
					'Prefix for every key (and the name of a watermark), so two workflows can each process the same event once',
				hint: "Remove Duplicates' Scope: Workflow is {{ $workflow.id }}, Node is {{ $workflow.id }}/{{ $nodeId }}. Empty: no prefix; for a Polled Item, this node's own history (as Scope Node).",
			},
			...tableOptions,
		],
	},
];
