import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { WebhookSignature } from '../../nodes/WebhookSignature/WebhookSignature.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import {
	genericHeader,
	githubHeader,
	slackHeaders,
	standardWebhooksHeaders,
	stripeHeader,
	twilioJsonSignature,
} from '../../harness/webhooks/signers';

const node = new WebhookSignature();
const SECRET = 'whsec_node_current_0123456789';
const PREVIOUS = 'whsec_node_previous_987654321';

async function run(
	items: INodeExecutionData[],
	parameters: IDataObject,
	extra: {
		continueOnFail?: boolean;
		onError?: INode['onError'];
		secret?: string;
		previousSecret?: string;
		perItem?: (name: string, index: number) => unknown;
		/** n8n cannot read the credential (e.g. an expression in it fails), with this message. */
		credentialFails?: string;
	} = {},
) {
	const context = executeContext(items, {
		parameters,
		// The fake context hands back whatever credential it is given; here, the signing secret's fields.
		credentials: {
			secret: extra.secret ?? SECRET,
			previousSecret: extra.previousSecret ?? '',
		},
		continueOnFail: extra.continueOnFail,
		onError: extra.onError,
		perItem: extra.perItem,
		nodeName: 'Webhook Signature',
	});
	if (extra.credentialFails !== undefined) {
		context.getCredentials = async () => {
			throw new Error(extra.credentialFails);
		};
	}
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
		// Not an error item: under "Continue (using error output)" n8n would move that to an error output the
		// workflow may not answer from; an Invalid verdict is answered like any forged delivery.
		expect(invalid).toEqual([
			{
				json: {
					...item.json,
					webhookSignature: {
						valid: false,
						scheme: 'twilio',
						reason: 'configuration_error',
						message: expect.stringMatching(/^Twilio needs the public URL/),
					},
				},
				binary: item.binary,
				pairedItem: { item: 0 },
			},
		]);
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

describe('a Valid item carries only what was signed', () => {
	const STRIPE = { scheme: 'stripe', toleranceSeconds: 300 };

	it('json.body is the parse of the verified bytes, whatever arrived in json.body', async () => {
		const signedBody = '{"id":"evt_signed","type":"invoice.paid"}';
		const item = stripeItem(signedBody);
		// What n8n hands on when something else filled json.body (a multipart field, a node in between).
		item.json.body = { id: 'evt_victim', type: 'invoice.paid' };
		const [valid] = await run([item], STRIPE);
		expect(valid[0].json.body).toEqual({ id: 'evt_signed', type: 'invoice.paid' });
	});

	it('only the verified binary property leaves Valid; any other file is dropped', async () => {
		const item = stripeItem('{"id":"evt_1"}');
		const verified = item.binary!.data;
		item.binary!.attachment = {
			data: Buffer.from('{"id":"evt_victim"}').toString('base64'),
			mimeType: 'application/json',
		};
		const [valid] = await run([item], STRIPE);
		expect(valid[0].binary).toEqual({ data: verified });
	});

	it('a genuinely signed body replayed as multipart (the signed JSON as file "data", a forged id field) is Invalid with unsigned_body', async () => {
		const captured = '{"id":"evt_captured","type":"invoice.paid"}';
		const item = stripeItem(captured, nowSeconds());
		// n8n 2.41.1's Webhook node: form fields in json.body, the file named "data" as binary data.
		item.json.headers = {
			...(item.json.headers as IDataObject),
			'content-type': 'multipart/form-data; boundary=------------------------1d2931183ffb243a',
		};
		item.json.body = { id: 'evt_victim' };
		const [valid, invalid] = await run([item], STRIPE);
		expect(valid).toHaveLength(0);
		expect(invalid[0].json.webhookSignature).toEqual({
			valid: false,
			scheme: 'stripe',
			reason: 'unsigned_body',
			message: expect.stringMatching(
				/^Content-Type multipart\/form-data: n8n splits such a request/,
			),
		});
	});

	it.each([
		['text/plain', /^Content-Type text\/plain: the node passes on only JSON/],
		['application/x-www-form-urlencoded', /but the body is JSON/],
		['application/json; charset=latin1', /names charset latin1/],
		['application/octet-stream', /^Content-Type application\/octet-stream/],
	])(
		'a genuinely signed JSON body relabelled %s is Invalid with unsigned_body',
		async (contentType, message) => {
			const body = '{"id":"evt_é"}';
			const item = webhookItem(body, {
				'stripe-signature': stripeHeader(SECRET, nowSeconds(), body),
				'content-type': contentType,
			});
			const [valid, invalid] = await run([item], STRIPE);
			expect(valid).toHaveLength(0);
			expect(invalid[0].json.webhookSignature).toMatchObject({ reason: 'unsigned_body', message });
		},
	);

	it('a signed JSON body naming "id" twice is Invalid: readers disagree on which id it carries', async () => {
		const [valid, invalid] = await run(
			[stripeItem('{"id":"evt_victim","id":"evt_signed"}')],
			STRIPE,
		);
		expect(valid).toHaveLength(0);
		expect(invalid[0].json.webhookSignature).toMatchObject({
			reason: 'unsigned_body',
			message: expect.stringMatching(/names body\.id twice/),
		});
	});

	it('a signed form body (Slack) is Valid with its fields as json.body; a repeated field as n8n parses it, an array', async () => {
		const form = 'token=x&team_id=T1&command=%2Fdeploy&text=prod+now';
		const slackItem = (body: string) =>
			webhookItem(body, {
				...slackHeaders(SECRET, nowSeconds(), body),
				'content-type': 'application/x-www-form-urlencoded',
			});
		const [valid] = await run([slackItem(form)], { scheme: 'slack', toleranceSeconds: 300 });
		expect(valid[0].json.body).toEqual({
			token: 'x',
			team_id: 'T1',
			command: '/deploy',
			text: 'prod now',
		});
		const [repeated] = await run([slackItem(`${form}&team_id=T2`)], {
			scheme: 'slack',
			toleranceSeconds: 300,
		});
		expect(repeated[0].json.body).toMatchObject({ team_id: ['T1', 'T2'] });
	});

	it('two signed forms whose ids differ only in bytes that are not UTF-8 (%FF, %FE) are both Invalid, never one key', async () => {
		const slackItem = (body: string) =>
			webhookItem(body, {
				...slackHeaders(SECRET, nowSeconds(), body),
				'content-type': 'application/x-www-form-urlencoded',
			});
		const [valid, invalid] = await run([slackItem('id=evt_%FF'), slackItem('id=evt_%FE')], {
			scheme: 'slack',
			toleranceSeconds: 300,
		});
		expect(valid).toHaveLength(0);
		expect(invalid.map((item) => item.json.webhookSignature)).toEqual([
			expect.objectContaining({
				reason: 'unsigned_body',
				message: expect.stringMatching(/holds "evt_%FF"/),
			}),
			expect.objectContaining({
				reason: 'unsigned_body',
				message: expect.stringMatching(/holds "evt_%FE"/),
			}),
		]);
	});

	it('an empty signed body is Valid with json.body {}', async () => {
		const [valid] = await run([stripeItem('')], STRIPE);
		expect(valid[0].json.body).toEqual({});
	});

	it('a forged multipart request is still a signature_mismatch: the signature is judged first', async () => {
		const item = webhookItem('{"id":"evt_1"}', {
			'stripe-signature': stripeHeader('whsec_attacker', nowSeconds(), '{"id":"evt_1"}'),
			'content-type': 'multipart/form-data; boundary=x',
		});
		const [, invalid] = await run([item], STRIPE);
		expect(reasons(invalid)).toEqual(['signature_mismatch']);
	});
});

describe('On Error: no setting lets an unverified item leave Valid', () => {
	const body = '{"id":"evt_victim"}';
	// A forgery made with the key a broken credential holds: an HMAC keyed with " " is one anyone can make.
	const forgedWith = (key: string) =>
		webhookItem(body, { 'stripe-signature': stripeHeader(key, nowSeconds(), body) });
	const STRIPE = { scheme: 'stripe', toleranceSeconds: 300 };
	const failingExpression = (name: string) =>
		name === 'toleranceSeconds'
			? (() => {
					throw new Error("Cannot read properties of undefined (reading 'tolerance')");
				})()
			: undefined;

	const broken: Array<[string, Parameters<typeof run>[2], Parameters<typeof run>[1], RegExp]> = [
		['an empty secret', { secret: '' }, STRIPE, /credential has no secret: Secret is empty/],
		['a secret of one space', { secret: ' ' }, STRIPE, /Secret holds only whitespace/],
		['a secret of one newline', { secret: '\n' }, STRIPE, /Secret holds only whitespace/],
		[
			'a Previous Secret of whitespace',
			{ previousSecret: ' \t' },
			STRIPE,
			/Previous Secret holds only whitespace/,
		],
		[
			'a credential n8n cannot read',
			{ credentialFails: 'ExpressionError: access to env vars denied' },
			STRIPE,
			/credential could not be read: ExpressionError: access to env vars denied/,
		],
		[
			'a tolerance expression that fails',
			{ perItem: failingExpression },
			STRIPE,
			/^(Item 0: )?Tolerance \(Seconds\): Cannot read/,
		],
		[
			'a tolerance of 0',
			{},
			{ scheme: 'stripe', toleranceSeconds: 0 },
			/Tolerance \(Seconds\) must be a positive number/,
		],
		[
			'Twilio without its public URL',
			{},
			{ scheme: 'twilio', publicUrl: ' ' },
			/Twilio needs the public URL/,
		],
	];

	describe.each(broken)('%s', (_label, extra, parameters, message) => {
		const items = () => [forgedWith(' '), forgedWith(''), forgedWith(SECRET)];

		it('Stop Workflow: a node error naming the field; nothing is routed', async () => {
			await expect(run(items(), parameters, { ...extra, onError: 'stopWorkflow' })).rejects.toThrow(
				message,
			);
		});

		it.each(['continueRegularOutput', 'continueErrorOutput'] as const)(
			'%s: every item Invalid with configuration_error naming the field, none Valid',
			async (onError) => {
				const [valid, invalid] = await run(items(), parameters, { ...extra, onError });
				expect(valid).toEqual([]);
				expect(invalid.map((item) => item.pairedItem)).toEqual([
					{ item: 0 },
					{ item: 1 },
					{ item: 2 },
				]);
				for (const item of invalid) {
					expect(item.json.webhookSignature).toEqual({
						valid: false,
						scheme: parameters.scheme,
						reason: 'configuration_error',
						message: expect.stringMatching(message),
					});
					expect(JSON.stringify(item.json)).not.toContain(SECRET);
				}
			},
		);
	});
});

describe('Webhook Signing Secret credential test', () => {
	const test = (data: Record<string, string>) =>
		new WebhookSignature().methods.credentialTest.webhookSigningSecretTest.call({} as never, {
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
