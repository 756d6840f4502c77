/**
 * What the node panels say, word for word where users compare it with what they see elsewhere: the key
 * prefixes and field names as the result carries them, and a hint under each field where a wrong value
 * loses events or runs a business step twice.
 */
import {
	NodeHelpers,
	type INodeParameters,
	type INodeProperties,
	type INodePropertyOptions,
} from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';

const claimDescription = new IdempotencyClaim().description;
const claimProperties = claimDescription.properties;
const keyProperties = new IdempotencyKey().description.properties;

function property(properties: INodeProperties[], name: string): INodeProperties {
	const found = properties.find((p) => p.name === name);
	if (!found) throw new Error(`no parameter ${name}`);
	return found;
}

describe('Key Source', () => {
	const keySource = property(claimProperties, 'keySource');
	const auto = (keySource.options as INodePropertyOptions[]).find(
		(option) => option.value === 'auto',
	)!;

	it('names the prefixes and the id field exactly as the keys carry them', () => {
		expect(auto.description).toContain('evt: + body.id');
		expect(auto.description).toContain('sha256: +');
		expect(auto.description).toContain('sha256-json: +');
		expect(auto.description).not.toMatch(/Evt:|body\.ID|sha256-JSON/);
	});

	/** The notices the editor shows under Key Source for these values (n8n-workflow's own rule). */
	const noticesShown = (values: INodeParameters) =>
		claimProperties
			.filter((p) => p.type === 'notice')
			.filter((p) =>
				NodeHelpers.displayParameter(values, p, { typeVersion: 1 }, claimDescription, values),
			)
			.map((p) => p.displayName);

	it('says under each source what only that source needs, and nothing under another', () => {
		expect(keySource.hint).toBeUndefined();
		expect(noticesShown({ keySource: 'auto' })).toEqual([
			expect.stringMatching(
				/exact request bytes only when the Webhook node's Raw Body option is on/,
			),
		]);
		expect(noticesShown({ keySource: 'preset', keyPreset: 'stripe' })).toEqual([
			expect.stringMatching(
				/^A delivery without the provider's event ID is not claimed.*bad_delivery/,
			),
		]);
		expect(noticesShown({ keySource: 'header' })).toEqual([
			expect.stringMatching(/^A header sent more than once is refused/),
		]);
		for (const source of ['field', 'expression', 'polled'])
			expect(noticesShown({ keySource: source })).toEqual([]);
	});
});

it('Claim Mode hints what Claim Once gives up, and the way out', () => {
	const hint = property(claimProperties, 'claimMode').hint;
	expect(hint).toMatch(
		/^Claim Once: if the business step fails, every retry is a Duplicate unless .* releases the key/,
	);
	expect(hint).toContain('Claim With Lease');
});

it('Lease hints that it must outlast the slowest business step', () => {
	expect(property(claimProperties, 'leaseSeconds').hint).toMatch(
		/^Must outlast your slowest business step: .*a second time/,
	);
});

it("Older Than hints that it must outlast the providers' resends", () => {
	const olderThan = property(keyProperties, 'olderThanDays');
	expect(olderThan.default).toBe(30);
	expect(olderThan.hint).toMatch(
		/^Must outlast how long your providers resend: a resend after the purge is processed again/,
	);
	expect(olderThan.hint).toContain('30 days');
});

it('puts hints only where they prevent a mistake, so the panels stay quiet', () => {
	const hinted = [...claimProperties, ...keyProperties]
		.flatMap((p) => [p, ...((p.options ?? []) as INodeProperties[])])
		.filter((p) => 'hint' in p && p.hint)
		.map((p) => p.name);
	expect(hinted.sort()).toEqual([
		'claimMode',
		'clearScope',
		'dedupeValue',
		'dedupeValue',
		'dedupeValue',
		'keepEvent',
		'keepItemsWhere',
		'leaseSeconds',
		'olderThanDays',
		'scope',
		'storeResponse',
		'waitSeconds',
	]);
});
