/**
 * The node against the providers' own code, with no database and no n8n: deliveries are signed by each
 * provider's official package (Stripe's generateTestHeaderString, Svix and Standard Webhooks `sign`,
 * Octokit's `sign`, Twilio's getExpectedTwilioSignature; Slack publishes no signer, so its documented scheme
 * is checked by Bolt's verifier), then tampered with. For every delivery the node's verdict is compared with
 * the library's own verify: genuine ones are Valid for both, every tampering Invalid for both, and the few
 * places where they deliberately differ are listed as such.
 *
 * @octokit/webhooks-methods is pinned to 4.1.0, its last CommonJS release (5.0 and later are ESM only, which
 * jest's CommonJS runtime cannot require).
 */
import { createHash } from 'node:crypto';

import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { isValidSlackRequest } from '@slack/bolt';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import {
	getExpectedTwilioSignature,
	validateRequest as twilioValidateRequest,
	validateRequestWithBody as twilioValidateRequestWithBody,
} from 'twilio/lib/webhooks/webhooks';

import { readSignedBody } from '../../nodes/shared/body/signedBody';
import {
	verifySignature,
	type SchemeName,
	type SchemeSettings,
} from '../../nodes/WebhookSignature/signature/schemes';
import { unusableSecret } from '../../nodes/WebhookSignature/signature/secrets';
import type { SigningSecrets } from '../../nodes/WebhookSignature/signature/verdict';
import { slackHeaders } from '../../harness/webhooks/signers';

const TOLERANCE = 300;
const stripe = new Stripe('sk_test_interop_not_a_real_key');
const whsec = (seed: string) => `whsec_${Buffer.from(seed.padEnd(32, '.')).toString('base64')}`;

/** One delivery as it reaches the node and a library: the exact bytes, header lines, the parsed query. */
interface Delivery {
	body: string;
	headers: Record<string, string>;
	query?: Record<string, string>;
}

interface Provider {
	name: string;
	scheme: SchemeName;
	settings?: Partial<SchemeSettings>;
	secret: string;
	/** The secret before a rotation: still accepted while it is the credential's Previous Secret. */
	previousSecret: string;
	otherSecret: string;
	body: string;
	contentType: string;
	/** Signed by the provider's package at Unix time `t`. */
	sign(secret: string, t: number, body: string): Delivery | Promise<Delivery>;
	/** The provider's package's own verdict, with this secret, now. */
	libraryAccepts(secret: string, delivery: Delivery): Promise<boolean>;
	signatureHeader: string;
	/** Whether the scheme signs a timestamp, and the header carrying it when that is not the signature header. */
	timestamped: boolean;
	timestampHeader?: string;
	/**
	 * The library accepts a signature header sent twice (one value joined with ", ") when any entry matches.
	 * The node refuses every such value, on purpose: no provider sends one, and it is how a forged header is
	 * added beside a genuine one.
	 */
	libraryAcceptsDoubledHeader?: boolean;
}

const accepts = async (check: () => unknown | Promise<unknown>) => {
	try {
		const result = await check();
		return result !== false;
	} catch {
		return false;
	}
};

const TWILIO_URL = 'https://hooks.example.com/webhook/twilio-sms?source=interop';
const TWILIO_PARAMS = {
	AccountSid: 'AC0000000000000000000000000000000',
	Body: 'Hello from "Twilio" & friends',
	From: '+15550001111',
	MessageSid: 'SM11111111111111111111111111111',
	To: '+15550002222',
};
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
const formFields = (body: string) => Object.fromEntries(new URLSearchParams(body));

const standardWebhooksLike = (
	name: string,
	scheme: 'standardWebhooks' | 'svix',
	prefix: 'webhook' | 'svix',
	Library: typeof StandardWebhook | typeof SvixWebhook,
): Provider => ({
	name,
	scheme,
	secret: whsec(`${name} current key`),
	previousSecret: whsec(`${name} previous key`),
	otherSecret: whsec(`${name} attacker key`),
	body: '{"type":"invoice.paid","data":{"id":"inv_1","amount":1200}}',
	contentType: 'application/json',
	sign: (secret, t, body) => ({
		body,
		headers: {
			[`${prefix}-id`]: 'msg_2mU3l9Z0interop',
			[`${prefix}-timestamp`]: String(t),
			[`${prefix}-signature`]: new Library(secret).sign(
				'msg_2mU3l9Z0interop',
				new Date(t * 1000),
				body,
			),
		},
	}),
	libraryAccepts: (secret, { body, headers }) =>
		accepts(() => new Library(secret).verify(body, headers)),
	signatureHeader: `${prefix}-signature`,
	timestamped: true,
	timestampHeader: `${prefix}-timestamp`,
	libraryAcceptsDoubledHeader: true,
});

const PROVIDERS: Provider[] = [
	{
		name: 'Stripe (stripe)',
		scheme: 'stripe',
		secret: 'whsec_interop_current_0123456789abcdef',
		previousSecret: 'whsec_interop_previous_0123456789abcd',
		otherSecret: 'whsec_interop_attacker_0123456789abcd',
		body: '{"id":"evt_1Interop","object":"event","type":"invoice.paid","data":{"object":{"amount":1200}}}',
		contentType: 'application/json; charset=utf-8',
		sign: (secret, t, body) => ({
			body,
			headers: {
				'stripe-signature': stripe.webhooks.generateTestHeaderString({
					payload: body,
					secret,
					timestamp: t,
				}),
			},
		}),
		libraryAccepts: (secret, { body, headers }) =>
			accepts(() =>
				stripe.webhooks.constructEvent(body, headers['stripe-signature'], secret, TOLERANCE),
			),
		signatureHeader: 'stripe-signature',
		timestamped: true,
		libraryAcceptsDoubledHeader: true,
	},
	{
		name: 'GitHub (@octokit/webhooks-methods)',
		scheme: 'github',
		secret: "It's a Secret to Everybody, interop",
		previousSecret: 'the webhook secret before the change',
		otherSecret: 'not the webhook secret',
		body: '{"ref":"refs/heads/main","repository":{"full_name":"octo/repo"}}',
		contentType: 'application/json',
		sign: async (secret, _t, body) => ({
			body,
			headers: { 'x-hub-signature-256': await octokitSign(secret, body) },
		}),
		libraryAccepts: (secret, { body, headers }) =>
			accepts(() => octokitVerify(secret, body, headers['x-hub-signature-256'])),
		signatureHeader: 'x-hub-signature-256',
		timestamped: false,
	},
	standardWebhooksLike(
		'Standard Webhooks (standardwebhooks)',
		'standardWebhooks',
		'webhook',
		StandardWebhook,
	),
	standardWebhooksLike('Svix (svix)', 'svix', 'svix', SvixWebhook),
	{
		name: 'Slack (documented scheme, checked by @slack/bolt)',
		scheme: 'slack',
		secret: '8f742231b10e8888abcd99yyyzzz85a5-interop',
		previousSecret: 'the signing secret before regeneration',
		otherSecret: 'another app signing secret',
		body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather&text=94070&trigger_id=1.2.3',
		contentType: 'application/x-www-form-urlencoded',
		sign: (secret, t, body) => ({ body, headers: slackHeaders(secret, t, body) }),
		libraryAccepts: (secret, { body, headers }) =>
			accepts(() =>
				isValidSlackRequest({
					signingSecret: secret,
					body,
					headers: {
						'x-slack-signature': headers['x-slack-signature'],
						'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
					},
				}),
			),
		signatureHeader: 'x-slack-signature',
		timestamped: true,
		timestampHeader: 'x-slack-request-timestamp',
	},
	{
		name: 'Twilio form (twilio)',
		scheme: 'twilio',
		settings: { publicUrl: TWILIO_URL },
		secret: '12345interopauthtoken',
		previousSecret: 'the auth token before rotation',
		otherSecret: 'another account auth token',
		body: form(TWILIO_PARAMS),
		contentType: 'application/x-www-form-urlencoded',
		sign: (secret, _t, body) => ({
			body,
			headers: {
				'x-twilio-signature': getExpectedTwilioSignature(secret, TWILIO_URL, formFields(body)),
			},
		}),
		libraryAccepts: (secret, { body, headers }) =>
			accepts(() =>
				twilioValidateRequest(secret, headers['x-twilio-signature'], TWILIO_URL, formFields(body)),
			),
		signatureHeader: 'x-twilio-signature',
		timestamped: false,
	},
	{
		name: 'Twilio JSON with bodySHA256 (twilio)',
		scheme: 'twilio',
		settings: { publicUrl: TWILIO_URL },
		secret: '12345interopauthtoken',
		previousSecret: 'the auth token before rotation',
		otherSecret: 'another account auth token',
		body: '{"EventType":"onMessageAdded","Body":"Hello"}',
		contentType: 'application/json',
		sign: (secret, _t, body) => {
			const bodySHA256 = signedBodyHash(body);
			const url = `${TWILIO_URL}&bodySHA256=${bodySHA256}`;
			return {
				body,
				headers: { 'x-twilio-signature': getExpectedTwilioSignature(secret, url, {}) },
				query: { source: 'interop', bodySHA256 },
			};
		},
		libraryAccepts: (secret, { body, headers, query }) =>
			accepts(() =>
				twilioValidateRequestWithBody(
					secret,
					headers['x-twilio-signature'],
					`${TWILIO_URL}&bodySHA256=${query?.bodySHA256}`,
					body,
				),
			),
		signatureHeader: 'x-twilio-signature',
		timestamped: false,
	},
];

/** Twilio's JSON deliveries name the SHA-256 of the body in the URL they sign. */
function signedBodyHash(body: string): string {
	return createHash('sha256').update(body).digest('hex');
}

const signedBy = async (provider: Provider, secret: string, t: number, body: string) =>
	await provider.sign(secret, t, body);

const now = () => Math.floor(Date.now() / 1000);

/** The node's signature verdict (what it then hands on as the body is readSignedBody's, tested below). */
function nodeAccepts(
	provider: Provider,
	delivery: Delivery,
	secrets: SigningSecrets = { current: provider.secret },
) {
	const verdict = verifySignature(
		provider.scheme,
		{
			rawBody: Buffer.from(delivery.body),
			headers: { 'content-type': provider.contentType, ...delivery.headers },
			query: delivery.query,
		},
		secrets,
		{ nowSeconds: Date.now() / 1000, toleranceSeconds: TOLERANCE, ...provider.settings },
	);
	return verdict.valid;
}

/** A tampered copy of a genuine delivery, or a delivery made differently. */
interface Tampering {
	label: string;
	make(provider: Provider): Promise<Delivery>;
	/** Only for schemes that sign a timestamp. */
	timestamped?: boolean;
	/** Where the library accepts it while the node does not (default: neither does). */
	libraryAccepts?: (provider: Provider) => boolean;
}

const changeOneByte = (body: string) => {
	const at = body.lastIndexOf('1');
	return `${body.slice(0, at)}2${body.slice(at + 1)}`;
};

const TAMPERINGS: Tampering[] = [
	{
		label: 'one body byte changed',
		make: async (p) => {
			const genuine = await signedBy(p, p.secret, now(), p.body);
			return { ...genuine, body: changeOneByte(p.body) };
		},
	},
	{
		label: 'signed with another secret',
		make: (p) => signedBy(p, p.otherSecret, now(), p.body),
	},
	{
		label: 'signed with the previous secret after the rotation is over',
		// The provider rotated to p.secret; a delivery (or a forgery) still signed with the old one.
		make: (p) => signedBy(p, p.previousSecret, now(), p.body),
	},
	{
		label: 'the signed timestamp changed',
		timestamped: true,
		make: async (p) => {
			const genuine = await signedBy(p, p.secret, now(), p.body);
			if (p.scheme === 'stripe') {
				const header = genuine.headers['stripe-signature'].replace(
					/^t=(\d+)/,
					(_, t) => `t=${Number(t) - 1}`,
				);
				return { ...genuine, headers: { 'stripe-signature': header } };
			}
			return {
				...genuine,
				headers: { ...genuine.headers, [p.timestampHeader!]: String(now() - 1) },
			};
		},
	},
	{
		label: 'signed ten minutes ago (a replay)',
		timestamped: true,
		make: (p) => signedBy(p, p.secret, now() - 600, p.body),
	},
	{
		label: 'the signature header missing',
		make: async (p) => {
			const genuine = await signedBy(p, p.secret, now(), p.body);
			const headers = { ...genuine.headers };
			delete headers[p.signatureHeader];
			return { ...genuine, headers };
		},
	},
	{
		label: 'the signature header sent twice (Node joins the lines with ", ")',
		make: async (p) => {
			const genuine = await signedBy(p, p.secret, now(), p.body);
			const forged = await signedBy(p, p.otherSecret, now(), p.body);
			const value = `${genuine.headers[p.signatureHeader]}, ${forged.headers[p.signatureHeader]}`;
			return { ...genuine, headers: { ...genuine.headers, [p.signatureHeader]: value } };
		},
		libraryAccepts: (p) => p.libraryAcceptsDoubledHeader === true,
	},
];

describe.each(PROVIDERS)('$name', (provider) => {
	it('a genuine delivery is Valid for the node and for the library, and its body is handed on as parsed from the bytes', async () => {
		const genuine = await signedBy(provider, provider.secret, now(), provider.body);
		expect(await provider.libraryAccepts(provider.secret, genuine)).toBe(true);
		expect(nodeAccepts(provider, genuine)).toBe(true);
		expect(readSignedBody(Buffer.from(genuine.body), provider.contentType)).toEqual({
			ok: true,
			body: provider.contentType.startsWith('application/json')
				? JSON.parse(provider.body)
				: formFields(provider.body),
		});
	});

	it('during a rotation the node takes the previous secret too', async () => {
		const old = await signedBy(provider, provider.previousSecret, now(), provider.body);
		expect(await provider.libraryAccepts(provider.previousSecret, old)).toBe(true);
		expect(nodeAccepts(provider, old)).toBe(false);
		expect(
			nodeAccepts(provider, old, { current: provider.secret, previous: provider.previousSecret }),
		).toBe(true);
	});

	const tamperings = TAMPERINGS.filter(
		(tampering) => !tampering.timestamped || provider.timestamped,
	);
	it.each(tamperings)(
		'$label: Invalid for the node, and as the library judges it',
		async ({ make, libraryAccepts }) => {
			const delivery = await make(provider);
			expect({
				node: nodeAccepts(provider, delivery),
				library: await provider.libraryAccepts(provider.secret, delivery),
			}).toEqual({ node: false, library: libraryAccepts?.(provider) ?? false });
		},
	);
});

describe('where the node is stricter than a library, on purpose', () => {
	it("a Stripe signature dated ten minutes ahead: Stripe's library checks only age, the node both ways (future_timestamp)", async () => {
		const [stripeProvider] = PROVIDERS;
		const ahead = await signedBy(
			stripeProvider,
			stripeProvider.secret,
			now() + 600,
			stripeProvider.body,
		);
		expect(await stripeProvider.libraryAccepts(stripeProvider.secret, ahead)).toBe(true);
		expect(nodeAccepts(stripeProvider, ahead)).toBe(false);
	});

	it('Standard Webhooks, Svix: a signature dated ten minutes ahead is refused by the libraries and by the node', async () => {
		for (const provider of PROVIDERS.filter(
			(p) => p.scheme === 'standardWebhooks' || p.scheme === 'svix',
		)) {
			const ahead = await signedBy(provider, provider.secret, now() + 600, provider.body);
			expect({
				provider: provider.name,
				library: await provider.libraryAccepts(provider.secret, ahead),
				node: nodeAccepts(provider, ahead),
			}).toEqual({
				provider: provider.name,
				library: false,
				node: false,
			});
		}
	});

	it('a Slack signature dated ten minutes ahead: Bolt checks only age, the node both ways', async () => {
		const slack = PROVIDERS.find((p) => p.scheme === 'slack')!;
		const ahead = await signedBy(slack, slack.secret, now() + 600, slack.body);
		expect(await slack.libraryAccepts(slack.secret, ahead)).toBe(true);
		expect(nodeAccepts(slack, ahead)).toBe(false);
	});
});

describe('Twilio: what the library accepts beyond the exact URL', () => {
	const twilio = PROVIDERS.find((p) => p.name.startsWith('Twilio form'))!;
	const withPort = TWILIO_URL.replace('hooks.example.com', 'hooks.example.com:443');

	it('a signature over the URL with its default port (:443) is Valid for both, as Twilio has signed either form', () => {
		const signature = getExpectedTwilioSignature(twilio.secret, withPort, TWILIO_PARAMS);
		const delivery = { body: twilio.body, headers: { 'x-twilio-signature': signature } };
		expect(twilioValidateRequest(twilio.secret, signature, TWILIO_URL, TWILIO_PARAMS)).toBe(true);
		expect(nodeAccepts(twilio, delivery)).toBe(true);
	});

	it('the parameters reordered or re-encoded: the same signature for both (Twilio signs the parameters, not the bytes)', () => {
		const signature = getExpectedTwilioSignature(twilio.secret, TWILIO_URL, TWILIO_PARAMS);
		const reordered = Object.entries(TWILIO_PARAMS)
			.reverse()
			.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
			.join('&');
		expect(reordered).not.toBe(twilio.body);
		expect(twilioValidateRequest(twilio.secret, signature, TWILIO_URL, formFields(reordered))).toBe(
			true,
		);
		expect(
			nodeAccepts(twilio, { body: reordered, headers: { 'x-twilio-signature': signature } }),
		).toBe(true);
		// Both byte strings hand on the same fields: a key must come from a field (MessageSid), not the bytes.
		expect(readSignedBody(Buffer.from(reordered), twilio.contentType)).toEqual(
			readSignedBody(Buffer.from(twilio.body), twilio.contentType),
		);
	});

	it('a parameter sent twice with one value signs as once; the node hands it on as n8n parses it (an array)', () => {
		const doubled = `${twilio.body}&MessageSid=${TWILIO_PARAMS.MessageSid}`;
		const signature = getExpectedTwilioSignature(twilio.secret, TWILIO_URL, TWILIO_PARAMS);
		expect(
			twilioValidateRequest(twilio.secret, signature, TWILIO_URL, {
				...TWILIO_PARAMS,
				MessageSid: [TWILIO_PARAMS.MessageSid, TWILIO_PARAMS.MessageSid],
			} as never),
		).toBe(true);
		expect(
			nodeAccepts(twilio, { body: doubled, headers: { 'x-twilio-signature': signature } }),
		).toBe(true);
		expect(readSignedBody(Buffer.from(doubled), twilio.contentType)).toEqual({
			ok: true,
			body: {
				...formFields(twilio.body),
				MessageSid: [TWILIO_PARAMS.MessageSid, TWILIO_PARAMS.MessageSid],
			},
		});
	});
});

describe('a secret that is only whitespace', () => {
	it("Stripe's library refuses to verify with it, and so does the node (Secret holds only whitespace)", async () => {
		const [stripeProvider] = PROVIDERS;
		const forged = await signedBy(stripeProvider, ' ', now(), stripeProvider.body);
		expect(await stripeProvider.libraryAccepts(' ', forged)).toBe(false);
		expect(unusableSecret({ current: ' ' })).toBe(
			'Secret holds only whitespace, which anyone could sign with',
		);
	});
});
