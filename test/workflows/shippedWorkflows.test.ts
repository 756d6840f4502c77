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

/** The workflow ids the shipped Execute Sub-workflow nodes call. */
const calledIds = new Set(
	workflows.flatMap(({ workflow }) =>
		workflow.nodes
			.filter((node) => node.type === 'n8n-nodes-base.executeWorkflow')
			.map((node) => (node.parameters.workflowId as { value: string }).value),
	),
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

it('ships the sixteen workflows', () => {
	expect(files.sort()).toEqual([
		'api-new-records.json',
		'builtin-nodes-template.json',
		'business-step.json',
		'chat-burst-template.json',
		'cleanup-processed-events.json',
		'github-template.json',
		'idempotency-claim-template.json',
		'idempotent-api-endpoint.json',
		'inbox-alert.json',
		'limited-webhook-template.json',
		'one-at-a-time-per-entity.json',
		'retry-due-events.json',
		'rss-feed-new-items.json',
		'stripe-template.json',
		'stuck-claims-report.json',
		'webhook-http-step-template.json',
	]);
});

describe.each(workflows)('$file', ({ workflow }) => {
	it('carries nothing of the machine it was made on', () => {
		// Only a sub-workflow carries an id: the one its callers name (n8n import:workflow keeps it).
		if (calledIds.has(String(workflow.id))) expect(workflow.id).toMatch(/^[A-Za-z0-9]{16}$/);
		else expect(workflow).not.toHaveProperty('id');
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

describe('the business step: one sub-workflow the webhook templates and the retry workflow call', () => {
	const callers = workflows.filter(({ workflow }) =>
		workflow.nodes.some((node) => node.type === 'n8n-nodes-base.executeWorkflow'),
	);

	it('is called by the node, Stripe and GitHub templates and by the retry workflow', () => {
		expect(callers.map(({ file }) => file).sort()).toEqual([
			'github-template.json',
			'idempotency-claim-template.json',
			'retry-due-events.json',
			'stripe-template.json',
		]);
	});

	it('each call names a shipped workflow by its id, once per event, failures to the error output', () => {
		for (const { file, workflow } of callers) {
			const call = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.executeWorkflow')!;
			const { workflowId } = call.parameters as { workflowId: { __rl: boolean; value: string } };
			const called = workflows.find((entry) => entry.workflow.id === workflowId.value);
			expect({ file, called: called?.file }).toEqual({ file, called: 'business-step.json' });
			// 1.3: n8n 1.123 and 2.41 both load it, and it sends every failed item to the one error output.
			expect({ file, typeVersion: call.typeVersion, onError: call.onError }).toEqual({
				file,
				typeVersion: 1.3,
				onError: 'continueErrorOutput',
			});
			expect(call.parameters).toMatchObject({ source: 'database', mode: 'each' });
			expect(workflowId.__rl).toBe(true);
		}
	});

	it('the sub-workflow starts from an Execute Sub-workflow Trigger that passes every field through', () => {
		const { workflow } = workflows.find((entry) => entry.file === 'business-step.json')!;
		const trigger = workflow.nodes.find(
			(node) => node.type === 'n8n-nodes-base.executeWorkflowTrigger',
		)!;
		expect(trigger.parameters).toEqual({ inputSource: 'passthrough' });
		const step = workflow.nodes.find((node) => node.name === 'Insert into business_log (example)')!;
		expect(workflow.connections[trigger.name].main[0].map((target) => target.node)).toEqual([
			step.name,
		]);
		// A failure fails the sub-workflow, so the caller's error output gets it.
		expect(step).not.toHaveProperty('onError');
	});
});

describe('the inbox: the webhook templates and retry-due-events.json', () => {
	const byName = (file: string) => {
		const { workflow } = workflows.find((entry) => entry.file === file)!;
		const node = (name: string) => workflow.nodes.find((candidate) => candidate.name === name)!;
		const targets = (name: string, output: number) =>
			(workflow.connections[name]?.main[output] ?? []).map((target) => target.node);
		return { node, targets };
	};

	it('the GitHub claim keeps the event; a failed business step goes to Retry Later, answered 202', () => {
		const github = byName('github-template.json');
		expect(github.node('Idempotency Claim').parameters).toMatchObject({
			claimMode: 'lease',
			keepEvent: true,
		});
		expect(github.targets('Business Step', 1)).toEqual(['Retry Later']);
		expect(github.node('Retry Later').parameters.operation).toBe('retryLater');
		expect(github.targets('Retry Later', 0)).toEqual(['Respond 202 kept for retry']);
	});

	it.each(['idempotency-claim-template.json', 'stripe-template.json'])(
		'%s keeps the event; a failed business step goes to Retry Later, answered 500 so the sender retries too',
		(file) => {
			const template = byName(file);
			expect(template.node('Idempotency Claim').parameters).toMatchObject({
				claimMode: 'lease',
				keepEvent: true,
			});
			expect(template.targets('Business Step', 0)).toEqual(['Mark Key Completed']);
			expect(template.targets('Business Step', 1)).toEqual(['Retry Later']);
			expect(template.node('Retry Later').parameters.operation).toBe('retryLater');
			for (const output of [0, 1]) {
				const [answer] = template.targets('Retry Later', output);
				expect(template.node(answer).parameters.options).toEqual({ responseCode: 500 });
			}
		},
	);

	it('the retry workflow takes due events on a schedule and by hand, then completes or retries each one', () => {
		const retry = byName('retry-due-events.json');
		expect(retry.targets('Every Minute', 0)).toEqual(['Take Due Events']);
		expect(retry.targets('Run Now', 0)).toEqual(['Take Due Events']);
		expect(retry.targets('Take Due Events', 0)).toEqual(['Business Step']);
		expect(retry.targets('Business Step', 0)).toEqual(['Mark Key Completed']);
		expect(retry.targets('Business Step', 1)).toEqual(['Retry Later']);
		// The same business step as the webhook templates'.
		for (const file of ['github-template.json', 'stripe-template.json'])
			expect(retry.node('Business Step').parameters).toEqual(
				byName(file).node('Business Step').parameters,
			);
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
