/**
 * The claim node's panel for polled items, computed the way n8n's editor decides what it shows
 * (n8n-workflow's own NodeHelpers): Remove Duplicates' names where a user migrates one-to-one, and a
 * webhook user's first screen exactly as it was.
 */
import {
	NodeHelpers,
	type INodeParameters,
	type INodeProperties,
	type INodePropertyOptions,
} from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';

const { description } = new IdempotencyClaim();
const { properties } = description;

/** The top-level parameters the editor shows for these values, with their defaults. */
function shown(values: INodeParameters): INodeParameters {
	return NodeHelpers.getNodeParameters(
		properties,
		values,
		true,
		false,
		{ typeVersion: 1 },
		description,
	)!;
}

/** The options the Options collection offers, with the default each gets when added. */
function optionsOffered(values: INodeParameters): Record<string, unknown> {
	const root = shown(values);
	const options = properties.find((p) => p.name === 'options')!.options as INodeProperties[];
	return Object.fromEntries(
		options
			.filter((option) =>
				NodeHelpers.displayParameter({}, option, { typeVersion: 1 }, description, root),
			)
			.map((option) => [option.name, option.default]),
	);
}

it("a webhook user's first screen is unchanged: Key Source, Claim Mode, Options", () => {
	// Besides the fields, the Raw Body notice under Key Source (it was the field's hint before).
	expect(Object.keys(shown({}))).toEqual(['keySource', 'eventIdKeyNotice', 'claimMode', 'options']);
	expect(optionsOffered({})).toEqual({
		binaryPropertyName: 'data',
		countRepeats: true,
		createTable: true,
		payloadFingerprint: 'off',
		scope: '',
		schema: 'public',
		table: 'processed_events',
	});
});

it("Key Source offers Polled Item, described as Remove Duplicates' Keep Items Where", () => {
	const keySource = properties.find((p) => p.name === 'keySource')!;
	const polled = (keySource.options as INodePropertyOptions[]).find((o) => o.value === 'polled')!;
	expect(polled.name).toBe('Polled Item');
	expect(polled.description).toMatch(/new, higher or a later date, as Remove Duplicates does/);
});

it("Polled Item shows Remove Duplicates' Keep Items Where and Value to Dedupe On, named as there", () => {
	const values = shown({ keySource: 'polled' });
	expect(Object.keys(values)).toEqual([
		'keySource',
		'keepItemsWhere',
		'dedupeValue',
		'claimMode',
		'options',
	]);
	const keep = properties.find((p) => p.name === 'keepItemsWhere')!;
	expect(keep.displayName).toBe('Keep Items Where');
	expect((keep.options as INodePropertyOptions[]).map((o) => o.name)).toEqual([
		'Value Is New',
		'Value Is Higher than Any Previous Value',
		'Value Is a Date Later than Any Previous Date',
	]);
	expect(keep.hint).toMatch(
		/^As in Remove Duplicates\. Value Is New: .*also a repeat within the same input\. .*a value equal to it goes to Duplicate/,
	);
	const dedupe = properties.filter((p) => p.name === 'dedupeValue');
	expect(dedupe.map((p) => p.displayName)).toEqual([
		'Value to Dedupe On',
		'Value to Dedupe On',
		'Value to Dedupe On',
	]);
	expect(dedupe[0].hint).toMatch(
		/^Remove Duplicates' Value Is New: .*also a repeat within the same input, goes to Duplicate/,
	);
});

it('Polled Item, Value Is New: Count Repeat Deliveries is offered off, and no Binary Property', () => {
	expect(optionsOffered({ keySource: 'polled' })).toEqual({
		countRepeats: false,
		createTable: true,
		payloadFingerprint: 'off',
		scope: '',
		schema: 'public',
		table: 'processed_events',
	});
});

it('a watermark hides what does not apply to it: Claim Mode, Count Repeat Deliveries, Payload Fingerprint', () => {
	for (const keepItemsWhere of ['higher', 'later']) {
		expect(Object.keys(shown({ keySource: 'polled', keepItemsWhere }))).toEqual([
			'keySource',
			'keepItemsWhere',
			'dedupeValue',
			'options',
		]);
		expect(Object.keys(optionsOffered({ keySource: 'polled', keepItemsWhere }))).toEqual([
			'createTable',
			'scope',
			'schema',
			'table',
		]);
		const dedupe = properties.find(
			(p) =>
				p.name === 'dedupeValue' && p.displayOptions?.show?.keepItemsWhere?.[0] === keepItemsWhere,
		)!;
		expect(dedupe.hint).toMatch(/an equal (value|date) goes to Duplicate, as in Remove Duplicates/);
	}
});

it("Scope hints the expressions of Remove Duplicates' Scope Workflow and Scope Node", () => {
	const options = properties.find((p) => p.name === 'options')!.options as INodeProperties[];
	const scope = options.find((option) => option.name === 'scope')!;
	expect(scope.hint).toContain('Workflow is {{ $workflow.id }}');
	expect(scope.hint).toContain('Node is {{ $workflow.id }}/{{ $nodeId }}');
	expect(scope.hint).toContain("for a Polled Item, this node's own history");
});

it('Idempotency Key offers Clear Deduplication History, with a Scope and a Batch Size', () => {
	const key = new IdempotencyKey().description;
	const operation = key.properties.find((p) => p.name === 'operation')!;
	expect((operation.options as INodePropertyOptions[]).map((o) => o.name)).toContain(
		'Clear Deduplication History',
	);
	const values = NodeHelpers.getNodeParameters(
		key.properties,
		{ operation: 'clearHistory' },
		true,
		false,
		{ typeVersion: 1 },
		key,
	)!;
	expect(values).toEqual({
		operation: 'clearHistory',
		clearScope: '',
		batchSize: 10000,
		options: {},
	});
});
