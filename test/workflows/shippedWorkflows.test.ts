/**
 * The exported workflows in workflows/ are shipped to users: they must import cleanly anywhere (no ids of
 * this machine's credentials, no pinned data), use the node types n8n gives this package, and only set
 * parameters the nodes really have. Running them in a real n8n is test/e2e's job.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { INodeProperties, INodePropertyCollection, INodeType } from 'n8n-workflow';

import { loadFromSource, manifest } from '../support/packageSources';
import { REPO_ROOT as REPO } from '../../harness/repo';

interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id?: unknown; name: string }>;
	webhookId?: string;
	onError?: string;
}
interface Workflow {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<string, { main: Array<Array<{ node: string }>> }>;
	[field: string]: unknown;
}

/** The editor's canvas units: a node's box, and its name's two lines below it. */
const NODE_WIDTH = 100;
const NODE_HEIGHT_WITH_NAME = 160;

const files = readdirSync(join(REPO, 'workflows')).filter((file) => file.endsWith('.json'));
const workflows = files.map((file) => ({
	file,
	workflow: JSON.parse(readFileSync(join(REPO, 'workflows', file), 'utf8')) as Workflow,
}));

const packageNodes = new Map<string, INodeType>(
	manifest.n8n.nodes.map((path) => {
		const node = loadFromSource<INodeType>(path);
		return [`${manifest.name}.${node.description.name}`, node];
	}),
);
const packageCredentialTypes = manifest.n8n.credentials.map(
	(path) => loadFromSource<{ name: string }>(path).name,
);

interface OptionsValue {
	path: string;
	value: unknown;
	offered: string[];
}

/** The values an options or multiOptions property offers, as n8n's editor lists them. */
function offeredBy(properties: readonly INodeProperties[]): string[] {
	return properties.flatMap((property) =>
		property.type === 'options' || property.type === 'multiOptions'
			? ((property.options ?? []) as Array<{ value?: unknown }>).flatMap((option) =>
					typeof option.value === 'string' ? [option.value] : [],
				)
			: [],
	);
}

/** Every options-typed value set in `parameters` (expressions excepted), with what its property offers. */
function optionsValues(
	properties: readonly INodeProperties[],
	parameters: Record<string, unknown>,
	prefix = '',
): OptionsValue[] {
	const found: OptionsValue[] = [];
	for (const [name, value] of Object.entries(parameters)) {
		if (typeof value === 'string' && value.startsWith('=')) continue;
		const path = `${prefix}${name}`;
		const declared = properties.filter((candidate) => candidate.name === name);
		const offered = offeredBy(declared);
		for (const property of declared) {
			const nested = (property.options ?? []) as INodeProperties[];
			if (property.type === 'options') found.push({ path, value, offered });
			else if (property.type === 'multiOptions')
				for (const each of value as unknown[]) found.push({ path, value: each, offered });
			else if (property.type === 'collection')
				found.push(...optionsValues(nested, value as Record<string, unknown>, `${path}.`));
			else if (property.type === 'fixedCollection') {
				const groups = property.options as INodePropertyCollection[];
				for (const [group, entries] of Object.entries(value as Record<string, unknown>)) {
					const groupProperties = groups.find((g) => g.name === group)?.values ?? [];
					for (const entry of [entries].flat() as Array<Record<string, unknown>>)
						found.push(...optionsValues(groupProperties, entry, `${path}.${group}.`));
				}
			}
		}
	}
	return found;
}

it('ships the fifteen workflows', () => {
	expect(files.sort()).toEqual([
		'api-new-records.json',
		'builtin-nodes-template.json',
		'chat-burst-template.json',
		'cleanup-processed-events.json',
		'github-template.json',
		'idempotency-claim-template.json',
		'idempotent-api-endpoint.json',
		'inbox-alert.json',
		'limited-webhook-template.json',
		'one-at-a-time-per-entity.json',
		'rate-limited-retries-template.json',
		'rss-feed-new-items.json',
		'stripe-template.json',
		'stuck-claims-report.json',
		'webhook-http-step-template.json',
	]);
});

describe.each(workflows)('$file', ({ workflow }) => {
	it('carries nothing of the machine it was made on', () => {
		expect(workflow).not.toHaveProperty('id');
		expect(workflow).not.toHaveProperty('versionId');
		expect(workflow).not.toHaveProperty('meta.instanceId');
		expect(workflow.pinData ?? {}).toEqual({});
		expect(workflow.active).toBe(false);
		for (const node of workflow.nodes) {
			for (const credential of Object.values(node.credentials ?? {}))
				expect(credential).toEqual({ name: credential.name });
		}
	});

	it('uses n8n-nodes-base types or this package as n8n loads it', () => {
		for (const node of workflow.nodes) {
			if (node.type.startsWith('n8n-nodes-base.')) continue;
			expect([...packageNodes.keys()]).toContain(node.type);
		}
	});

	it("sets only parameters the package's nodes have, and each node's own credential type", () => {
		for (const node of workflow.nodes.filter((n) => packageNodes.has(n.type))) {
			const { description } = packageNodes.get(node.type)!;
			expect(node.typeVersion).toBe(description.version);
			const known = new Map(description.properties.map((property) => [property.name, property]));
			for (const [name, value] of Object.entries(node.parameters)) {
				expect({ node: node.name, parameter: name, known: known.has(name) }).toEqual({
					node: node.name,
					parameter: name,
					known: true,
				});
				if (name === 'options') {
					const optionNames = (
						(known.get('options') as INodeProperties).options as INodeProperties[]
					).map((o) => o.name);
					for (const option of Object.keys(value as object)) expect(optionNames).toContain(option);
				}
			}
			const wanted = (description.credentials ?? []).map((credential) => credential.name);
			expect(Object.keys(node.credentials ?? {})).toEqual(wanted);
			for (const type of wanted) expect(packageCredentialTypes).toContain(type);
		}
	});

	it("sets every options parameter to a value the node's description offers (at any depth)", () => {
		for (const node of workflow.nodes.filter((n) => packageNodes.has(n.type))) {
			const { properties } = packageNodes.get(node.type)!.description;
			for (const { path, value, offered } of optionsValues(properties, node.parameters))
				expect({
					node: node.name,
					path,
					value,
					offered: offered.includes(value as string),
				}).toEqual({ node: node.name, path, value, offered: true });
		}
	});

	it('connects only nodes that exist, and node names and ids are unique', () => {
		const names = workflow.nodes.map((node) => node.name);
		expect(new Set(names).size).toBe(names.length);
		expect(new Set(workflow.nodes.map((node) => node.id)).size).toBe(names.length);
		for (const [from, { main }] of Object.entries(workflow.connections)) {
			expect(names).toContain(from);
			for (const target of main.flat()) expect(names).toContain(target.node);
		}
	});

	it('places no node over another (a node is 100 wide, 160 tall with its name of up to two lines below it)', () => {
		const placed = workflow.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
		const overlapping = placed.flatMap((a, i) =>
			placed
				.slice(i + 1)
				.filter(
					(b) =>
						Math.abs(a.position[0] - b.position[0]) < NODE_WIDTH &&
						Math.abs(a.position[1] - b.position[1]) < NODE_HEIGHT_WITH_NAME,
				)
				.map((b) => `${a.name} ~ ${b.name}`),
		);
		expect(overlapping).toEqual([]);
	});
});

it('gives every webhook its own path (n8n silently skips a second workflow on the same path)', () => {
	const paths = workflows.flatMap(({ workflow }) =>
		workflow.nodes
			.filter((node) => node.type === 'n8n-nodes-base.webhook')
			.map((node) => node.parameters.path),
	);
	expect(paths.length).toBeGreaterThan(0);
	expect(new Set(paths).size).toBe(paths.length);
});

const SIGNATURE_NODE = `${manifest.name}.webhookSignature`;
const CLAIM_NODE = `${manifest.name}.idempotencyClaim`;

describe.each([
	{ file: 'stripe-template.json', scheme: 'stripe', keyPreset: 'stripe' },
	{ file: 'github-template.json', scheme: 'github', keyPreset: 'github' },
])('$file: the signature is checked before anything is claimed', ({ file, scheme, keyPreset }) => {
	const { workflow } = workflows.find((entry) => entry.file === file)!;
	const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
	const targets = (from: string, output: number) =>
		(workflow.connections[from]?.main[output] ?? []).map((target) => byName.get(target.node)!);

	it('Webhook (Raw Body on, answered by a node) feeds only the Webhook Signature node', () => {
		const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook')!;
		expect(webhook.parameters).toMatchObject({
			httpMethod: 'POST',
			responseMode: 'responseNode',
			options: { rawBody: true },
		});
		expect(workflow.connections[webhook.name].main).toHaveLength(1);
		expect(targets(webhook.name, 0).map((node) => node.type)).toEqual([SIGNATURE_NODE]);
	});

	it(`checks the ${scheme} scheme; Valid goes to the claim (preset ${keyPreset}), Invalid is answered 401`, () => {
		const signature = workflow.nodes.find((node) => node.type === SIGNATURE_NODE)!;
		expect(signature.parameters.scheme).toBe(scheme);
		const [claim] = targets(signature.name, 0);
		expect(claim.type).toBe(CLAIM_NODE);
		expect(claim.parameters).toMatchObject({ keySource: 'preset', keyPreset, claimMode: 'lease' });
		const [reject] = targets(signature.name, 1);
		expect(reject.type).toBe('n8n-nodes-base.respondToWebhook');
		expect(reject.parameters).toMatchObject({ options: { responseCode: 401 } });
	});

	it('nothing else reaches the claim: every path to it passes Valid', () => {
		const claim = workflow.nodes.find((node) => node.type === CLAIM_NODE)!;
		const feeders = Object.entries(workflow.connections).flatMap(([from, { main }]) =>
			main.flatMap((targetsOfOutput, output) =>
				targetsOfOutput
					.filter((target) => target.node === claim.name)
					.map(() => ({ from, output })),
			),
		);
		expect(feeders).toEqual([{ from: 'Webhook Signature', output: 0 }]);
	});
});

const KEY_NODE = `${manifest.name}.idempotencyKey`;

describe('stuck-claims-report.json', () => {
	const { workflow } = workflows.find((entry) => entry.file === 'stuck-claims-report.json')!;
	const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
	const targetsOf = (from: string) =>
		(workflow.connections[from]?.main ?? []).flat().map((target) => byName.get(target.node)!);
	const report = workflow.nodes.find((node) => node.type === KEY_NODE)!;
	const keyProperties = packageNodes.get(KEY_NODE)!.description.properties;

	it('runs List Stuck Claims from a Schedule Trigger and from a Manual Trigger', () => {
		for (const type of ['n8n-nodes-base.scheduleTrigger', 'n8n-nodes-base.manualTrigger']) {
			const trigger = workflow.nodes.find((node) => node.type === type)!;
			expect(targetsOf(trigger.name)).toEqual([report]);
		}
		const operation = keyProperties.find((property) => property.name === 'operation')!;
		expect((operation.options as Array<{ value: string }>).map((o) => o.value)).toContain(
			report.parameters.operation,
		);
		expect(report.parameters.operation).toBe('listStuck');
	});

	it("sets only parameters the List Stuck Claims operation shows, with values of the property's type", () => {
		for (const [name, value] of Object.entries(report.parameters)) {
			if (name === 'operation' || name === 'options') continue;
			const property = keyProperties.find((candidate) => candidate.name === name)!;
			expect({ name, shownFor: property.displayOptions?.show?.operation }).toEqual({
				name,
				shownFor: ['listStuck'],
			});
			expect({ name, type: typeof value }).toEqual({
				name,
				type: property.type === 'boolean' ? 'boolean' : 'number',
			});
		}
	});

	it('ends in one clearly marked node for the user to replace, after every other node', () => {
		const ends = workflow.nodes.filter(
			(node) => node.type !== 'n8n-nodes-base.stickyNote' && !workflow.connections[node.name],
		);
		expect(ends.map((node) => node.name)).toEqual(['Send the report here (replace me)']);
		let node = report;
		const path = [node.name];
		while (workflow.connections[node.name]) {
			[node] = targetsOf(node.name);
			path.push(node.name);
		}
		expect(path.at(-1)).toBe('Send the report here (replace me)');
	});

	it('its note says what to do with a stuck key for each provider', () => {
		const note = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.stickyNote')!;
		const content = String(note.parameters.content);
		expect(content).toMatch(/GitHub.*redeliver.*\/deliveries\/\{delivery_id\}\/attempts/s);
		expect(content).toMatch(/Stripe.*Dashboard.*stripe events resend/s);
		expect(content).toMatch(/Standard Webhooks \/ Svix.*replay/s);
		expect(content).toMatch(/replace me/);
	});
});

describe('inbox-alert.json', () => {
	const { workflow } = workflows.find((entry) => entry.file === 'inbox-alert.json')!;
	const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
	const targetsOf = (from: string) =>
		(workflow.connections[from]?.main ?? []).flat().map((target) => byName.get(target.node)!.name);

	it('runs from a Schedule Trigger and a Manual Trigger through the thresholds to Summarize Inbox, then to one node to replace', () => {
		for (const type of ['n8n-nodes-base.scheduleTrigger', 'n8n-nodes-base.manualTrigger']) {
			const trigger = workflow.nodes.find((node) => node.type === type)!;
			expect(targetsOf(trigger.name)).toEqual(['Alert Thresholds (edit me)']);
		}
		const path = ['Alert Thresholds (edit me)'];
		while (workflow.connections[path.at(-1)!]) path.push(...targetsOf(path.at(-1)!));
		expect(path).toEqual([
			'Alert Thresholds (edit me)',
			'Summarize Inbox',
			'Over a Threshold?',
			'Describe Each Alert',
			'Send the alert here (replace me)',
		]);
		expect(byName.get('Summarize Inbox')!).toMatchObject({
			type: KEY_NODE,
			parameters: { operation: 'inboxSummary', options: {} },
		});
	});

	it('its thresholds are numbers the filter reads by the node’s name', () => {
		const thresholds = byName.get('Alert Thresholds (edit me)')!.parameters as {
			assignments: { assignments: Array<{ name: string; type: string; value: unknown }> };
		};
		expect(
			thresholds.assignments.assignments.map(({ name, type, value }) => ({ name, type, value })),
		).toEqual([
			{ name: 'deadLetters', type: 'number', value: 1 },
			{ name: 'dueLagMinutes', type: 'number', value: 10 },
		]);
		const filter = JSON.stringify(byName.get('Over a Threshold?')!.parameters);
		for (const name of ['deadLetters', 'dueLagMinutes'])
			expect(filter).toContain(`$('Alert Thresholds (edit me)').first().json.${name}`);
	});
});

describe.each([
	{
		file: 'rss-feed-new-items.json',
		fetchType: 'n8n-nodes-base.rssFeedRead',
		dedupeValue: '={{ $json.guid || $json.link }}',
	},
	{
		file: 'api-new-records.json',
		fetchType: 'n8n-nodes-base.httpRequest',
		dedupeValue: '={{ $json.id }}',
	},
])('$file: a polled feed passes only its new items on', ({ file, fetchType, dedupeValue }) => {
	const { workflow } = workflows.find((entry) => entry.file === file)!;
	const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
	const targets = (from: string, output: number) =>
		(workflow.connections[from]?.main[output] ?? []).map((target) => byName.get(target.node)!);
	const claim = workflow.nodes.find((node) => node.type === CLAIM_NODE)!;
	const fetcher = workflow.nodes.find((node) => node.type === fetchType)!;

	it('a Schedule Trigger and a Manual Trigger (Run Now) both start the fetch, which feeds the claim', () => {
		for (const type of ['n8n-nodes-base.scheduleTrigger', 'n8n-nodes-base.manualTrigger']) {
			const trigger = workflow.nodes.find((node) => node.type === type)!;
			expect(targets(trigger.name, 0)).toEqual([fetcher]);
		}
		expect(targets(fetcher.name, 0)).toEqual([claim]);
	});

	it('claims each item once by its own value: Polled Item, Value Is New, Claim Once (repeats write nothing)', () => {
		expect(claim.parameters).toEqual({
			keySource: 'polled',
			keepItemsWhere: 'new',
			dedupeValue,
			claimMode: 'once',
			options: {},
		});
		// An item without a value goes to the error output; the others of the poll are still claimed.
		expect((claim as { onError?: string }).onError).toBe('continueErrorOutput');
	});

	it('New runs the business step, whose failures release the key for the next poll; Duplicate does nothing', () => {
		const [business] = targets(claim.name, 0);
		expect(business.type).toBe('n8n-nodes-base.postgres');
		// One query per item: a failure then fails that item alone, and its error item stays paired with
		// the claim's item, which Release Key reads (one query for all fails them all, unpaired).
		expect(business.parameters.options).toMatchObject({ queryBatching: 'independently' });
		const [release] = targets(business.name, 1);
		expect(release.type).toBe(KEY_NODE);
		expect(release.parameters).toMatchObject({
			operation: 'release',
			key: "={{ $('Idempotency Claim').item.json.idempotency.key }}",
			claimId: "={{ $('Idempotency Claim').item.json.idempotency.claimId }}",
		});
		expect(targets(claim.name, 1).map((node) => node.type)).toEqual(['n8n-nodes-base.noOp']);
		expect(targets(claim.name, 2).map((node) => node.type)).toEqual(['n8n-nodes-base.noOp']);
	});

	it('asks the user to replace the example URL', () => {
		expect(fetcher.name).toMatch(/\(replace URL\)$/);
		expect(String(fetcher.parameters.url)).toMatch(/^https:\/\/(api\.)?example\.com\//);
	});
});

it('no shipped workflow calls a sub-workflow: each runs its business step as its own nodes', () => {
	const callers = workflows.filter(({ workflow }) =>
		workflow.nodes.some((node) => node.type === 'n8n-nodes-base.executeWorkflow'),
	);
	expect(callers.map(({ file }) => file)).toEqual([]);
});

describe.each([
	{ file: 'idempotency-claim-template.json', scope: undefined, keptAnswer: 500 },
	{ file: 'stripe-template.json', scope: 'stripe', keptAnswer: 500 },
	{ file: 'github-template.json', scope: 'github', keptAnswer: 202 },
])(
	'$file: the write commits with Complete, and the retries run in the same workflow',
	({ file, scope, keptAnswer }) => {
		const { workflow } = workflows.find((entry) => entry.file === file)!;
		const node = (name: string) => workflow.nodes.find((candidate) => candidate.name === name)!;
		const targets = (name: string, output: number) =>
			(workflow.connections[name]?.main[output] ?? []).map((target) => target.node);

		it('the claim keeps the event; New and the due events both lead into Write and Complete', () => {
			expect(node('Idempotency Claim').parameters).toMatchObject({
				claimMode: 'lease',
				keepEvent: true,
			});
			expect(targets('Idempotency Claim', 0)).toEqual(['Event to Process']);
			expect(targets('Every Minute (retries)', 0)).toEqual(['Take Due Events']);
			expect(targets('Run Now', 0)).toEqual(['Take Due Events']);
			expect(targets('Take Due Events', 0)).toEqual(['Event to Process']);
			expect(targets('Event to Process', 0)).toEqual(['Write and Complete']);
			expect(node('Write and Complete')).toMatchObject({
				type: KEY_NODE,
				onError: 'continueErrorOutput',
				parameters: { operation: 'completeWithWrite' },
			});
		});

		it('its write is parameterised SQL: the query names no value, the key is its first parameter', () => {
			const { query, queryParameters } = node('Write and Complete').parameters as {
				query: string;
				queryParameters: string;
			};
			expect(query).toMatch(/\$1\b/);
			expect(query).not.toMatch(/\{\{|\$json/);
			expect(queryParameters).toMatch(/^=\{\{ \[ \$json\.idempotency\.key, /);
		});

		it(`Take Due Events takes only this template's events: Scope ${scope ?? '(none)'}, as on its claim`, () => {
			const claimScope = (node('Idempotency Claim').parameters.options as { scope?: string }).scope;
			expect(claimScope).toBe(scope);
			expect(node('Take Due Events').parameters.scope ?? undefined).toBe(scope);
		});

		it(`a failed write goes to Retry Later, answered ${keptAnswer} when kept and 500 when not`, () => {
			expect(targets('Write and Complete', 0)).toEqual(['Respond 200 processed']);
			expect(targets('Write and Complete', 1)).toEqual(['Retry Later']);
			expect(node('Retry Later').parameters).toMatchObject({
				operation: 'retryLater',
				key: "={{ $('Event to Process').item.json.idempotency.key }}",
				claimId: "={{ $('Event to Process').item.json.idempotency.claimId }}",
			});
			const answers = [0, 1].map((output) => {
				const [answer] = targets('Retry Later', output);
				return node(answer).parameters.options;
			});
			expect(answers).toEqual([{ responseCode: keptAnswer }, { responseCode: 500 }]);
		});
	},
);

describe('idempotency-claim-template.json: one workflow, the webhook and its retries into the same write', () => {
	const { workflow } = workflows.find((entry) => entry.file === 'idempotency-claim-template.json')!;
	const node = (name: string) => workflow.nodes.find((candidate) => candidate.name === name)!;
	const targets = (name: string, output: number) =>
		(workflow.connections[name]?.main[output] ?? []).map((target) => target.node);
	/** Every node that feeds this one, with the output it comes from. */
	const feeders = (name: string) =>
		Object.entries(workflow.connections).flatMap(([from, { main }]) =>
			main.flatMap((outputTargets, output) =>
				outputTargets.filter((target) => target.node === name).map(() => ({ from, output })),
			),
		);

	it('calls no sub-workflow: the business write is a node of its own', () => {
		expect(workflow.nodes.map((candidate) => candidate.type)).not.toContain(
			'n8n-nodes-base.executeWorkflow',
		);
		const text = JSON.stringify(workflow);
		for (const former of ['business-step.json', 'retry-due-events.json', 'Retry Due Events'])
			expect({ former, named: text.includes(former) }).toEqual({ former, named: false });
	});

	it('the Webhook passes the signature check into the claim, which keeps the event under a lease', () => {
		expect(targets('Webhook', 0)).toEqual(['Webhook Signature']);
		expect(targets('Webhook Signature', 0)).toEqual(['Idempotency Claim']);
		expect(node('Idempotency Claim').parameters).toMatchObject({
			claimMode: 'lease',
			keepEvent: true,
		});
	});

	it("New and the retry schedule's due events (and Run Now) lead into the same Write and Complete", () => {
		expect(feeders('Event to Process')).toEqual([
			{ from: 'Idempotency Claim', output: 0 },
			{ from: 'Take Due Events', output: 0 },
		]);
		expect(
			feeders('Take Due Events')
				.map(({ from }) => node(from).type)
				.sort(),
		).toEqual(['n8n-nodes-base.manualTrigger', 'n8n-nodes-base.scheduleTrigger']);
		expect(node('Take Due Events').parameters.operation).toBe('takeDue');
		// A due event is taken under the same lease and attempt limit as a delivery's claim.
		for (const setting of ['leaseSeconds', 'maxAttempts'])
			expect({ setting, value: node('Take Due Events').parameters[setting] }).toEqual({
				setting,
				value: node('Idempotency Claim').parameters[setting],
			});
		expect(targets('Event to Process', 0)).toEqual(['Write and Complete']);
		expect(feeders('Write and Complete')).toEqual([{ from: 'Event to Process', output: 0 }]);
	});

	it('Write and Complete commits the example insert with the Complete, its values as parameters', () => {
		const write = node('Write and Complete');
		expect(write.type).toBe(KEY_NODE);
		expect(write.onError).toBe('continueErrorOutput');
		expect(write.parameters).toMatchObject({
			operation: 'completeWithWrite',
			query: 'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			queryParameters: '={{ [ $json.idempotency.key, $json.body?.type ?? null ] }}',
		});
	});
});

it('the Idempotency-Key template answers a database failure 503 with Retry-After, so a caller waits and retries', () => {
	const { workflow } = workflows.find((entry) => entry.file === 'idempotent-api-endpoint.json')!;
	const respond = workflow.nodes.find((node) => node.name === 'Respond 503 retry later')!;
	expect(respond.parameters.options).toMatchObject({
		responseCode: 503,
		responseHeaders: { entries: [{ name: 'Retry-After', value: '30' }] },
	});
});
