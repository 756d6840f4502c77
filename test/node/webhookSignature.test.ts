import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { WebhookSignature } from '../../nodes/WebhookSignature/WebhookSignature.node';
import { webhookSigningSecretTest } from '../../nodes/WebhookSignature/methods/credentialTest';
import { executeContext, webhookItem } from '../support/executeContext';
import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import {
	genericHeader,
	githubHeader,
	standardWebhooksHeaders,
	stripeHeader,
	twilioJsonSignature,
} from '../support/signers';

const node = new WebhookSignature();
const SECRET = 'whsec_node_current_0123456789';
const PREVIOUS = 'whsec_node_previous_987654321';

async function run(
	items: INodeExecutionData[],
	parameters: IDataObject,
	extra: { continueOnFail?: boolean; secret?: string; previousSecret?: string } = {},
) {
	const context = executeContext(items, {
		parameters,
		// The fake context hands back whatever credential it is given; here, the signing secret's fields.
		credentials: {
			secret: extra.secret ?? SECRET,
			previousSecret: extra.previousSecret ?? '',
		} as unknown as PostgresCredentials,
		continueOnFail: extra.continueOnFail,
		nodeName: 'Webhook Signature',
	});
	return node.execute.call(context);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const stripeItem = (body: string, t = nowSeconds(), secret = SECRET) =>
	webhookItem(body, { 'stripe-signature': stripeHeader(secret, t, body) });
const reasons = (items: INodeExecutionData[]) =>
	items.map((item) => (item.json.webhookSignature as IDataObject).reason);

afterEach(() => jest.restoreAllMocks());

describe('Webhook Signature node', () => {
	it('routes genuine deliveries to Valid and forged ones to Invalid, in order, with pairedItem, json and binary kept', async () => {
		const genuine = stripeItem('{"id":"evt_1"}');
		const forged = webhookItem('{"id":"evt_2"}', {
			'stripe-signature': stripeHeader('whsec_attacker', nowSeconds(), '{"id":"evt_2"}'),
		});
		const unsigned = webhookItem('{"id":"evt_3"}');
		const alsoGenuine = stripeItem('{"id":"evt_4"}');

		const [valid, invalid] = await run([genuine, forged, unsigned, alsoGenuine], {
			scheme: 'stripe',
			toleranceSeconds: 300,
		});

		expect(valid.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 3 }]);
		expect(invalid.map((item) => item.pairedItem)).toEqual([{ item: 1 }, { item: 2 }]);
		expect(valid[0].json).toMatchObject({
			body: { id: 'evt_1' },
			webhookSignature: { valid: true, scheme: 'stripe', secretUsed: 'current' },
		});
		expect(valid[0].binary?.data).toBe(genuine.binary!.data);
		expect(reasons(invalid)).toEqual(['signature_mismatch', 'missing_header']);
		expect(invalid[0].json.body).toEqual({ id: 'evt_2' });
		expect(JSON.stringify([valid, invalid])).not.toContain(SECRET);
	});

	it("without the Webhook node's raw bytes the item is Invalid and the message says how to fix it", async () => {
		const item = stripeItem('{"id":"evt_1"}');
		delete item.binary;
		const [valid, invalid] = await run([item], { scheme: 'stripe' });
		expect(valid).toHaveLength(0);
		expect(invalid[0].json.webhookSignature).toMatchObject({
			valid: false,
			reason: 'no_raw_body',
			message: expect.stringMatching(/Raw Body/),
		});
	});

	it('reads the raw bytes from the binary property named in the options', async () => {
		const item = stripeItem('{"id":"evt_1"}');
		item.binary = { body: item.binary!.data };
		const [valid] = await run([item], {
			scheme: 'stripe',
			options: { binaryPropertyName: 'body' },
		});
		expect(valid).toHaveLength(1);
	});

	it("accepts the credential's previous secret during a rotation and says so", async () => {
		const [valid, invalid] = await run(
			[stripeItem('{"id":"evt_1"}', nowSeconds(), PREVIOUS)],
			{ scheme: 'stripe' },
			{ previousSecret: PREVIOUS },
		);
		expect(invalid).toHaveLength(0);
		expect(valid[0].json.webhookSignature).toMatchObject({ valid: true, secretUsed: 'previous' });
	});

	it('judges every item of an execution against one clock, read once', async () => {
		const start = 1_760_000_000;
		// The first read is the execution's clock; any later read would be ten minutes on.
		const clock = jest
			.spyOn(Date, 'now')
			.mockReturnValueOnce(start * 1000)
			.mockReturnValue((start + 600) * 1000);
		const items = [
			stripeItem('{"id":"a"}', start - 300),
			stripeItem('{"id":"b"}', start - 300),
			stripeItem('{"id":"c"}', start - 300),
		];
		const [valid, invalid] = await run(items, { scheme: 'stripe', toleranceSeconds: 300 });
		expect(clock).toHaveBeenCalled();
		expect([valid.length, invalid.length]).toEqual([3, 0]);
	});

	it('stale and future signatures go to Invalid with their reason', async () => {
		const [, invalid] = await run(
			[stripeItem('{"id":"a"}', nowSeconds() - 400), stripeItem('{"id":"b"}', nowSeconds() + 400)],
			{ scheme: 'stripe', toleranceSeconds: 300 },
		);
		expect(reasons(invalid)).toEqual(['stale_timestamp', 'future_timestamp']);
	});

	it('GitHub, Standard Webhooks and a generic HMAC, configured through the node parameters', async () => {
		const body = '{"zen":"Keep it logically awesome."}';
		const [github] = await run(
			[webhookItem(body, { 'x-hub-signature-256': githubHeader(SECRET, body) })],
			{ scheme: 'github' },
		);
		expect(github).toHaveLength(1);

		const whsec = `whsec_${Buffer.from('a standard webhooks key!').toString('base64')}`;
		const standard = webhookItem(body, standardWebhooksHeaders(whsec, 'msg_1', nowSeconds(), body));
		const [standardValid] = await run(
			[standard],
			{ scheme: 'standardWebhooks', toleranceSeconds: 300 },
			{ secret: whsec },
		);
		expect(standardValid).toHaveLength(1);

		const generic = webhookItem(body, {
			'x-sig': `v1:${genericHeader('sha1', 'base64', SECRET, Buffer.from(body))}`,
		});
		const [genericValid] = await run([generic], {
			scheme: 'genericHmac',
			signatureHeader: 'X-Sig',
			algorithm: 'sha1',
			encoding: 'base64',
			prefix: 'v1:',
			timestampHeader: '',
			signedContent: '{body}',
		});
		expect(genericValid).toHaveLength(1);
	});

	it('Twilio JSON: bodySHA256 is read from the query n8n parsed', async () => {
		const url = 'https://hooks.example.com/webhook/twilio';
		const body = '{"EventType":"onMessageAdded"}';
		const { signature, bodySHA256 } = twilioJsonSignature(SECRET, url, body);
		const item = webhookItem(body, { 'x-twilio-signature': signature });
		item.json.query = { bodySHA256 };
		const [valid] = await run([item], { scheme: 'twilio', publicUrl: url });
		expect(valid).toHaveLength(1);
		const [, invalid] = await run([item], { scheme: 'twilio', publicUrl: `${url}-elsewhere` });
		expect(invalid[0].json.webhookSignature).toMatchObject({ reason: 'signature_mismatch' });
	});

	it('an unknown scheme is Invalid with unknown_scheme', async () => {
		const [, invalid] = await run([stripeItem('{"id":"a"}')], { scheme: 'paypal' });
		expect(invalid[0].json.webhookSignature).toMatchObject({ reason: 'unknown_scheme' });
	});

	it('a setting that verifies nothing is a node error naming the item; with Continue On Fail the item goes to Invalid, never Valid', async () => {
		const item = stripeItem('{"id":"a"}');
		await expect(run([item], { scheme: 'twilio', publicUrl: '' })).rejects.toThrow(
			/^Item 0: Twilio needs the public URL/,
		);
		const [valid, invalid] = await run(
			[item],
			{ scheme: 'twilio', publicUrl: '' },
			{ continueOnFail: true },
		);
		expect(valid).toHaveLength(0);
		expect(invalid[0]).toEqual({
			json: { error: expect.stringMatching(/^Item 0: Twilio needs/) },
			pairedItem: { item: 0 },
		});
	});

	it('a credential without a secret is a node error', async () => {
		await expect(
			run([stripeItem('{"id":"a"}')], { scheme: 'stripe' }, { secret: '' }),
		).rejects.toThrow(/has no secret/);
	});

	it('a malformed Standard Webhooks secret is a node error that does not repeat the secret', async () => {
		const secret = 'whsec_this is not base64';
		const body = '{}';
		const item = webhookItem(
			body,
			standardWebhooksHeaders('whsec_AAAA', 'msg', nowSeconds(), body),
		);
		const failure = await run([item], { scheme: 'standardWebhooks' }, { secret }).catch(
			(error: Error) => error,
		);
		expect(failure).toBeInstanceOf(Error);
		expect((failure as Error).message).toMatch(/not a Standard Webhooks secret/);
		expect((failure as Error).message).not.toContain('this is not base64');
	});

	it('no input items, no work', async () => {
		expect(await run([], { scheme: 'stripe' })).toEqual([[], []]);
	});
});

describe('Webhook Signing Secret credential test', () => {
	const test = (data: Record<string, string>) =>
		webhookSigningSecretTest.call({} as never, {
			id: '1',
			name: 'c',
			type: 'idempotencyWebhookSigningApi',
			data,
		});

	it.each([
		[{ secret: 'whsec_abc' }, 'OK', /is set/],
		[{ secret: '' }, 'Error', /empty/],
		[{ secret: 'whsec_abc\n' }, 'Error', /whitespace/],
		[
			{ secret: 'whsec_abc', previousSecret: ' old' },
			'Error',
			/previous secret starts or ends with whitespace/,
		],
		[{ secret: 'whsec_abc', previousSecret: 'whsec_abc' }, 'Error', /same as the secret/],
	])('%j → %s', async (data, status, message) => {
		const result = await test(data);
		expect(result.status).toBe(status);
		expect(result.message).toMatch(message);
	});
});
