import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { testCredentials, testPool, uniqueTableName } from '../support/database';
import { executeContext, webhookItem } from '../../harness/node/executeContext';

const node = new IdempotencyClaim();

function run(
	items: INodeExecutionData[],
	keyPreset: string,
	options: IDataObject,
	perItem?: (name: string, index: number) => unknown,
) {
	const context = executeContext(items, {
		parameters: { keySource: 'preset', keyPreset, claimMode: 'once', options },
		perItem,
		credentials: testCredentials(),
	});
	return node.execute.call(context);
}

const keyOf = (item: INodeExecutionData) => (item.json.idempotency as IDataObject).key;

/** A first delivery and its redelivery, as each provider sends them: same event id, new signature. */
const redelivered = (
	body: string,
	firstHeaders: Record<string, string>,
	againHeaders: Record<string, string>,
	key: string,
) => ({ first: webhookItem(body, firstHeaders), again: webhookItem(body, againHeaders), key });

const deliveries = {
	stripe: redelivered(
		'{"id":"evt_1Q","type":"invoice.paid"}',
		{ 'stripe-signature': 't=1,v1=aa' },
		{ 'stripe-signature': 't=2,v1=bb' },
		'evt:evt_1Q',
	),
	github: redelivered(
		'{"zen":"x"}',
		{ 'X-GitHub-Delivery': '72d3162e-cc78', 'x-hub-signature-256': 'sha256=aa' },
		{ 'x-github-delivery': '72d3162e-cc78', 'x-hub-signature-256': 'sha256=aa' },
		'evt:72d3162e-cc78',
	),
	// An API caller's retry: the draft's quoted form, then the bare form many clients send; one key.
	idempotencyKey: redelivered(
		'{"amount":10}',
		{ 'Idempotency-Key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' },
		{ 'idempotency-key': '8e03978e-40d5-43e8-bc93-6894a57f9324' },
		'evt:8e03978e-40d5-43e8-bc93-6894a57f9324',
	),
	shopify: redelivered(
		'{"id":820982911946154500}',
		{ 'X-Shopify-Event-Id': '98880550-7158-44d4', 'x-shopify-topic': 'orders/create' },
		{ 'x-shopify-event-id': '98880550-7158-44d4', 'x-shopify-topic': 'orders/create' },
		'evt:98880550-7158-44d4',
	),
	slack: redelivered(
		'{"type":"event_callback","event_id":"Ev0PV52K21","event":{"type":"app_mention"}}',
		{},
		{ 'x-slack-retry-num': '1' },
		'evt:Ev0PV52K21',
	),
	standardWebhooks: redelivered(
		'{"type":"user.created"}',
		{ 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 'webhook-timestamp': '1' },
		{ 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 'webhook-timestamp': '2' },
		'evt:msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
	),
	svix: redelivered(
		'{"type":"user.created"}',
		{ 'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek' },
		{ 'Svix-Id': 'msg_p5jXN8AQM9LWM0D4loKWxJek' },
		'evt:msg_p5jXN8AQM9LWM0D4loKWxJek',
	),
};

describe('Idempotency Claim: provider key presets', () => {
	it('offers exactly the presets this file tests, each with its advice', () => {
		const presets = node.description.properties.find((property) => property.name === 'keyPreset')!
			.options as Array<{ value: string; description: string }>;
		expect(presets.map((preset) => preset.value).sort()).toEqual(Object.keys(deliveries).sort());
		for (const preset of presets) expect(preset.description.length).toBeGreaterThan(10);
	});

	it.each(Object.entries(deliveries))(
		'%s: the delivery is New, its redelivery (new signature) is a Duplicate',
		async (preset, { first, again, key }) => {
			const options = { table: uniqueTableName('preset') };
			const [created] = await run([first], preset, options);
			const [, duplicate] = await run([again], preset, options);
			expect(created.map(keyOf)).toEqual([key]);
			expect(duplicate.map(keyOf)).toEqual([key]);
		},
	);

	it('Shopify: one event reaching two subscriptions is claimed once per scope (topic)', async () => {
		const table = uniqueTableName('preset');
		const event = (topic: string) =>
			webhookItem('{"id":1}', { 'x-shopify-event-id': 'ev-shared', 'x-shopify-topic': topic });
		const items = [event('orders/create'), event('orders/paid'), event('orders/create')];
		const scopeByTopic = (name: string, index: number) =>
			name === 'options.scope'
				? ((items[index].json.headers as IDataObject)['x-shopify-topic'] as string)
				: undefined;
		const [created, duplicate] = await run(items, 'shopify', { table }, scopeByTopic);
		expect(created.map(keyOf)).toEqual([
			'orders/create:evt:ev-shared',
			'orders/paid:evt:ev-shared',
		]);
		expect(duplicate.map(keyOf)).toEqual(['orders/create:evt:ev-shared']);
		const pool = testPool(1);
		const { rowCount } = await pool.query(`SELECT 1 FROM ${table}`);
		await pool.end();
		expect(rowCount).toBe(2);
	});

	it("a delivery without the preset's id is an error naming the item and where the id was looked for", async () => {
		await expect(
			run([webhookItem('{"id":"x"}')], 'github', { table: uniqueTableName('preset') }),
		).rejects.toThrow(/^Item 0: no key: header "X-GitHub-Delivery" is missing or empty/);
	});

	it('an unknown preset is an error naming it', async () => {
		await expect(
			run([webhookItem('{"id":"x"}')], 'paypal', { table: uniqueTableName('preset') }),
		).rejects.toThrow(/^Item 0: unknown provider preset "paypal"/);
	});
});
