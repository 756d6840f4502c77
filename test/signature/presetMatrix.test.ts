/**
 * The same attacks and mistakes against every preset: each must end in the verdict that names it, and no
 * verdict may ever carry a secret.
 */
import {
	verifySignature,
	type SchemeName,
	type SchemeSettings,
} from '../../nodes/WebhookSignature/signature/schemes';
import type {
	SignedRequest,
	SignatureVerdict,
} from '../../nodes/WebhookSignature/signature/verdict';
import {
	newEd25519Pair,
	standardWebhooksEd25519Headers,
	type Ed25519Pair,
	genericHeader,
	githubHeader,
	shopifyHeader,
	slackHeaders,
	standardWebhooksHeaders,
	stripeHeader,
	twilioFormSignature,
} from '../../harness/webhooks/signers';

const NOW = 1_760_000_000;
const TOLERANCE = 300;
const BODY = '{"id":"evt_9","type":"order.paid","amount":1200}';
const FORM_BODY = 'AccountSid=AC1&Body=hello+there&From=%2B15550001&MessageSid=SM1';
const TWILIO_URL = 'https://hooks.example.com/webhook/twilio-sms';
const GENERIC = {
	signatureHeader: 'X-Acme-Signature',
	algorithm: 'sha512' as const,
	encoding: 'hex' as const,
	prefix: 'sha512=',
	timestampHeader: 'X-Acme-Timestamp',
	signedContent: '{timestamp}.{header:X-Acme-Event}.{body}',
};

interface Preset {
	scheme: SchemeName;
	label?: string;
	/** Secrets in each scheme's own format. */
	secret: string;
	otherSecret: string;
	/** The body a delivery carries: BODY unless the scheme signs something else. */
	body?: string;
	/** Headers a genuine delivery carries, signed at `t`. */
	sign(secret: string, t: number, body: string): Record<string, string>;
	signatureHeader: string;
	timestamped: boolean;
	/** The signature header with no signature in it. */
	emptyList(t: number): string;
}

const whsec = (seed: string) => `whsec_${Buffer.from(seed.padEnd(24, '.')).toString('base64')}`;

/** The Ed25519 preset's "secrets" are public keys; signing needs the private key of the same pair. */
const ed25519Pairs = new Map<string, Ed25519Pair>();
function ed25519PublicKey(): string {
	const pair = newEd25519Pair();
	ed25519Pairs.set(pair.publicKey, pair);
	return pair.publicKey;
}

const presets: Preset[] = [
	{
		scheme: 'stripe',
		secret: 'whsec_current_stripe',
		otherSecret: 'whsec_other_stripe',
		sign: (secret, t, body) => ({ 'stripe-signature': stripeHeader(secret, t, body) }),
		signatureHeader: 'stripe-signature',
		timestamped: true,
		emptyList: (t) => `t=${t}`,
	},
	{
		scheme: 'github',
		secret: 'gh-secret',
		otherSecret: 'gh-other',
		sign: (secret, _t, body) => ({
			'x-hub-signature-256': githubHeader(secret, body),
			'x-github-delivery': 'd-1',
		}),
		signatureHeader: 'x-hub-signature-256',
		timestamped: false,
		emptyList: () => 'sha256=',
	},
	{
		scheme: 'shopify',
		secret: 'shpss_current',
		otherSecret: 'shpss_other',
		sign: (secret, _t, body) => ({ 'x-shopify-hmac-sha256': shopifyHeader(secret, body) }),
		signatureHeader: 'x-shopify-hmac-sha256',
		timestamped: false,
		emptyList: () => '',
	},
	{
		scheme: 'slack',
		secret: 'slack-signing-current',
		otherSecret: 'slack-signing-other',
		sign: (secret, t, body) => slackHeaders(secret, t, body),
		signatureHeader: 'x-slack-signature',
		timestamped: true,
		emptyList: () => 'v0=',
	},
	{
		scheme: 'standardWebhooks',
		secret: whsec('current'),
		otherSecret: whsec('other'),
		sign: (secret, t, body) => standardWebhooksHeaders(secret, 'msg_1', t, body),
		signatureHeader: 'webhook-signature',
		timestamped: true,
		emptyList: () => 'v2,c2lnbmF0dXJl',
	},
	{
		scheme: 'standardWebhooks',
		label: 'standardWebhooks, v1a (Ed25519 public key)',
		secret: ed25519PublicKey(),
		otherSecret: ed25519PublicKey(),
		sign: (publicKey, t, body) =>
			standardWebhooksEd25519Headers(ed25519Pairs.get(publicKey)!, 'msg_3', t, body),
		signatureHeader: 'webhook-signature',
		timestamped: true,
		emptyList: () => 'v2,c2lnbmF0dXJl',
	},
	{
		scheme: 'svix',
		secret: whsec('current-svix'),
		otherSecret: whsec('other-svix'),
		sign: (secret, t, body) => standardWebhooksHeaders(secret, 'msg_2', t, body, 'svix'),
		signatureHeader: 'svix-signature',
		timestamped: true,
		emptyList: () => ' ',
	},
	{
		scheme: 'twilio',
		secret: 'twilio-auth-token',
		otherSecret: 'twilio-other-token',
		body: FORM_BODY,
		sign: (secret, _t, body) => ({
			'x-twilio-signature': twilioFormSignature(
				secret,
				TWILIO_URL,
				Object.fromEntries(new URLSearchParams(body)),
			),
		}),
		signatureHeader: 'x-twilio-signature',
		timestamped: false,
		emptyList: () => '',
	},
	{
		scheme: 'genericHmac',
		secret: 'acme-secret',
		otherSecret: 'acme-other',
		sign: (secret, t, body) => ({
			'x-acme-timestamp': String(t),
			'x-acme-event': 'ev-7',
			'x-acme-signature': `sha512=${genericHeader('sha512', 'hex', secret, Buffer.from(`${t}.ev-7.${body}`))}`,
		}),
		signatureHeader: 'x-acme-signature',
		timestamped: true,
		emptyList: () => 'sha512=',
	},
];

const settings: SchemeSettings = {
	nowSeconds: NOW,
	toleranceSeconds: TOLERANCE,
	publicUrl: TWILIO_URL,
	generic: GENERIC,
};

const refused = (reason: string) => ({ valid: false, reason });

describe.each(presets.map((preset) => ({ ...preset, label: preset.label ?? preset.scheme })))(
	'$label',
	(preset) => {
		const presetBody = preset.body ?? BODY;
		const secrets = { current: preset.secret };
		const verdicts: SignatureVerdict[] = [];
		const verify = (
			request: SignedRequest,
			secretsUsed: { current: string; previous?: string } = secrets,
			at = settings,
		) => {
			const verdict = verifySignature(preset.scheme, request, secretsUsed, at);
			verdicts.push(verdict);
			return verdict;
		};
		const delivery = (
			headers: Record<string, string>,
			body: string | null = presetBody,
		): SignedRequest => ({
			rawBody: body === null ? undefined : Buffer.from(body),
			headers: { 'content-type': 'application/json', ...headers },
		});
		const genuine = (t = NOW, secret = preset.secret) => preset.sign(secret, t, presetBody);
		const withSignatureHeader = (value: string) =>
			delivery({ ...genuine(), [preset.signatureHeader]: value });

		afterAll(() => {
			// Every verdict this preset produced above, valid or not: none names a secret.
			expect(verdicts.length).toBeGreaterThan(8);
			const text = JSON.stringify(verdicts);
			for (const secret of [preset.secret, preset.otherSecret]) expect(text).not.toContain(secret);
		});

		it('a genuine delivery is valid, signed with the current secret', () => {
			expect(verify(delivery(genuine()))).toMatchObject({
				valid: true,
				scheme: preset.scheme,
				secretUsed: 'current',
			});
		});

		it('one byte of the body changed → signature_mismatch', () => {
			const changed = Buffer.from(presetBody);
			changed[changed.length - 2] ^= 0x01;
			expect(verify({ rawBody: changed, headers: genuine() })).toMatchObject(
				refused('signature_mismatch'),
			);
		});

		it('signed with another secret → signature_mismatch', () => {
			expect(verify(delivery(genuine(NOW, preset.otherSecret)))).toMatchObject(
				refused('signature_mismatch'),
			);
		});

		it('signed with the previous secret during a rotation → valid, and says so', () => {
			const rotating = { current: preset.otherSecret, previous: preset.secret };
			expect(verify(delivery(genuine()), rotating)).toMatchObject({
				valid: true,
				secretUsed: 'previous',
			});
			// Without the previous secret configured, the same delivery is refused.
			expect(verify(delivery(genuine()), { current: preset.otherSecret })).toMatchObject({
				reason: 'signature_mismatch',
			});
		});

		if (preset.timestamped) {
			it('signed just inside the tolerance, either way → valid', () => {
				for (const t of [NOW - TOLERANCE, NOW + TOLERANCE]) {
					expect(verify(delivery(genuine(t)))).toMatchObject({ valid: true, timestamp: t });
				}
			});

			it('a genuine signature older than the tolerance → stale_timestamp', () => {
				expect(verify(delivery(genuine(NOW - TOLERANCE - 1)))).toMatchObject(
					refused('stale_timestamp'),
				);
			});

			it('a genuine signature from further in the future than the tolerance → future_timestamp', () => {
				expect(verify(delivery(genuine(NOW + TOLERANCE + 1)))).toMatchObject(
					refused('future_timestamp'),
				);
			});

			it('the tolerance is a setting', () => {
				const old = delivery(genuine(NOW - 1000));
				expect(verify(old, secrets, { ...settings, toleranceSeconds: 1000 })).toMatchObject({
					valid: true,
				});
				expect(verify(old, secrets, { ...settings, toleranceSeconds: 999 })).toMatchObject({
					reason: 'stale_timestamp',
				});
			});
		} else {
			it('signs no timestamp: an old genuine delivery stays valid (the claim stops its replay)', () => {
				expect(verify(delivery(genuine(NOW - 86_400)))).toMatchObject({
					valid: true,
					timestamp: null,
				});
			});
		}

		it('the signature header listed twice (Node joins the values with ", ") → malformed_header', () => {
			const headers = genuine();
			const signature = headers[preset.signatureHeader];
			expect(verify(withSignatureHeader(`${signature}, ${signature}`))).toMatchObject({
				...refused('malformed_header'),
				message: expect.stringMatching(/more than once/),
			});
			expect(
				verify({
					...delivery(headers),
					headers: { ...headers, [preset.signatureHeader]: [signature, 'x'] },
				}),
			).toMatchObject({ reason: 'malformed_header' });
		});

		it('an empty signature list → malformed_header', () => {
			expect(verify(withSignatureHeader(preset.emptyList(NOW)))).toMatchObject(
				refused('malformed_header'),
			);
		});

		it('a malformed signature header → malformed_header', () => {
			expect(verify(withSignatureHeader('not a signature!'))).toMatchObject(
				refused('malformed_header'),
			);
		});

		it('no signature header → missing_header, naming it', () => {
			const headers: Record<string, string> = genuine();
			delete headers[preset.signatureHeader];
			const verdict = verify(delivery(headers));
			expect(verdict).toMatchObject(refused('missing_header'));
			expect((verdict as { message: string }).message.toLowerCase()).toContain(
				preset.signatureHeader,
			);
		});

		it('no raw body → no_raw_body, saying how to fix it', () => {
			expect(verify(delivery(genuine(), null))).toMatchObject({
				...refused('no_raw_body'),
				message: expect.stringMatching(/Raw Body/),
			});
		});

		it('header names are case-insensitive', () => {
			const upper = Object.fromEntries(
				Object.entries(genuine()).map(([name, value]) => [name.toUpperCase(), value]),
			);
			expect(verify(delivery(upper))).toMatchObject({ valid: true });
		});
	},
);

describe('what no preset accepts', () => {
	const verifyOne = (
		scheme: string,
		rawBody: Buffer,
		headers: Record<string, string>,
		secret = 'k',
	) => verifySignature(scheme, { rawBody, headers }, { current: secret }, settings);

	it('an unknown scheme → unknown_scheme', () => {
		expect(verifyOne('paypal', Buffer.from('{}'), {}, 's')).toMatchObject({
			...refused('unknown_scheme'),
			message: expect.stringMatching(/"paypal"/),
		});
	});

	it('Stripe: two t= (a header pasted twice without a space) → malformed_header', () => {
		const header = `${stripeHeader('k', NOW, BODY)},${stripeHeader('k', NOW, BODY)}`;
		expect(verifyOne('stripe', Buffer.from(BODY), { 'stripe-signature': header })).toMatchObject({
			reason: 'malformed_header',
			message: expect.stringMatching(/exactly one t=/),
		});
	});

	it('a signature over re-serialised JSON is not the signature over the bytes', () => {
		const sent = '{ "id": "evt_9",  "type": "order.paid" }';
		const headers = { 'x-hub-signature-256': githubHeader('k', sent) };
		const reserialised = Buffer.from(JSON.stringify(JSON.parse(sent)));
		expect(verifyOne('github', Buffer.from(sent), headers)).toMatchObject({ valid: true });
		expect(verifyOne('github', reserialised, headers)).toMatchObject({
			reason: 'signature_mismatch',
		});
	});
});

describe('settings that make every delivery unverifiable are configuration errors, without the secret', () => {
	const request: SignedRequest = {
		rawBody: Buffer.from(BODY),
		headers: standardWebhooksHeaders(whsec('x'), 'msg', NOW, BODY),
	};
	const verifying =
		(scheme: string, secret: string, at: Partial<SchemeSettings> = {}) =>
		() =>
			verifySignature(scheme, request, { current: secret }, { ...settings, ...at });

	it('a Standard Webhooks secret that is not base64', () => {
		const verifyNotBase64 = verifying('standardWebhooks', 'whsec_not*base64!');
		expect(verifyNotBase64).toThrow(/not a Standard Webhooks secret/);
		try {
			verifyNotBase64();
		} catch (error) {
			expect((error as Error).message).not.toContain('not*base64');
		}
	});

	it('Twilio without a public URL', () => {
		expect(verifying('twilio', 't', { publicUrl: '' })).toThrow(/public URL/);
	});

	it.each([
		['{timestamp}', /must contain \{body\}/],
		['{body}.{nonce}', /unknown placeholder/],
	])('Generic HMAC with Signed Content %s', (signedContent, message) => {
		const generic = { ...GENERIC, signedContent };
		expect(verifying('genericHmac', 't', { generic })).toThrow(message);
	});

	it('Generic HMAC with {timestamp} but no Timestamp Header', () => {
		const generic = { ...GENERIC, timestampHeader: '' };
		expect(verifying('genericHmac', 't', { generic })).toThrow(/no Timestamp Header/);
	});
});
