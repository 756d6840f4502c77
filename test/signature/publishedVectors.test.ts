/**
 * Each scheme against the vectors its provider (or RFC) publishes: if these pass, the construction is the
 * provider's, not merely consistent with our own signer.
 */
import {
	ed25519PublicKey,
	ed25519VerifiesAny,
} from '../../nodes/WebhookSignature/signature/ed25519';
import { hmac } from '../../nodes/WebhookSignature/signature/hmac';
import {
	verifySignature,
	type SchemeSettings,
} from '../../nodes/WebhookSignature/signature/schemes';
import type { SignedRequest } from '../../nodes/WebhookSignature/signature/verdict';
import {
	newEd25519Pair,
	standardWebhooksEd25519Headers,
	stripeHeader,
} from '../../harness/webhooks/signers';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const delivery = (
	body: string,
	headers: Record<string, string>,
	query?: Record<string, string>,
): SignedRequest => ({ rawBody: bytes(body), headers, query });
/** The whole verdict of a delivery verified with the current secret. */
const validVerdict = (scheme: string, timestamp: number | null) => ({
	valid: true,
	scheme,
	secretUsed: 'current',
	timestamp,
});
const at = (nowSeconds: number, extra: Partial<SchemeSettings> = {}): SchemeSettings => ({
	nowSeconds,
	toleranceSeconds: 300,
	...extra,
});

/** Twilio's documentation and libraries sign their examples for this URL with the auth token 12345. */
const verifyTwilioExample = (request: SignedRequest) =>
	verifySignature(
		'twilio',
		request,
		{ current: '12345' },
		at(0, { publicUrl: 'https://mycompany.com/myapp.php?foo=1&bar=2' }),
	);

describe('published vectors', () => {
	it('GitHub\'s documented example: secret "It\'s a Secret to Everybody", body "Hello, World!"', () => {
		const request = delivery('Hello, World!', {
			'x-hub-signature-256':
				'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
		});
		expect(
			verifySignature('github', request, { current: "It's a Secret to Everybody" }, at(0)),
		).toEqual(validVerdict('github', null));
	});

	it("Slack's documented example (slash command body, timestamp 1531420618)", () => {
		const body =
			'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
			'&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com' +
			'%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
		const request = delivery(body, {
			'x-slack-request-timestamp': '1531420618',
			'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
		});
		const secrets = { current: '8f742231b10e8888abcd99yyyzzz85a5' };
		expect(verifySignature('slack', request, secrets, at(1531420618))).toMatchObject({
			valid: true,
			timestamp: 1531420618,
		});
		// The same genuine request five minutes and one second later is a replay.
		expect(verifySignature('slack', request, secrets, at(1531420618 + 301))).toMatchObject({
			valid: false,
			reason: 'stale_timestamp',
		});
	});

	it.each(['webhook', 'svix'] as const)(
		"the Standard Webhooks libraries' test vector, with %s-* headers",
		(prefix) => {
			const request = delivery('{"test": 2432232314}', {
				[`${prefix}-id`]: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
				[`${prefix}-timestamp`]: '1614265330',
				[`${prefix}-signature`]: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
			});
			const scheme = prefix === 'svix' ? 'svix' : 'standardWebhooks';
			const verdict = verifySignature(
				scheme,
				request,
				{ current: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
				at(1614265330),
			);
			expect(verdict).toEqual(validVerdict(scheme, 1614265330));
		},
	);

	it("Twilio's documented form example (auth token 12345)", () => {
		const request = delivery(
			'CallSid=CA1234567890ABCDE&Caller=%2B14158675310&Digits=1234&From=%2B14158675310&To=%2B18005551212',
			{ 'x-twilio-signature': 'GvWf1cFY/Q7PnoempGyD5oXAezc=' },
		);
		expect(verifyTwilioExample(request)).toMatchObject({ valid: true, scheme: 'twilio' });
		// Parameter order in the body does not matter: Twilio signs them sorted by name.
		const reordered = {
			...request,
			rawBody: bytes(
				'To=%2B18005551212&From=%2B14158675310&Digits=1234&Caller=%2B14158675310&CallSid=CA1234567890ABCDE',
			),
		};
		expect(verifyTwilioExample(reordered)).toMatchObject({ valid: true });
	});

	it("Twilio's JSON (bodySHA256) example from its libraries' tests", () => {
		const request = delivery(
			'{"property": "value", "boolean": true}',
			{ 'x-twilio-signature': 'a9nBmqA0ju/hNViExpshrM61xv4=' },
			{
				foo: '1',
				bar: '2',
				bodySHA256: '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620',
			},
		);
		expect(verifyTwilioExample(request)).toMatchObject({ valid: true });
		// The URL is genuine but the bytes are not the ones its bodySHA256 names.
		const swapped = { ...request, rawBody: bytes('{"property": "other", "boolean": true}') };
		expect(verifyTwilioExample(swapped)).toMatchObject({
			valid: false,
			reason: 'signature_mismatch',
		});
	});

	describe('RFC 4231 (the HMAC primitive every scheme uses)', () => {
		const case1 = { key: Buffer.alloc(20, 0x0b), data: 'Hi There' };
		const case2 = { key: 'Jefe', data: 'what do ya want for nothing?' };
		it.each([
			[
				'case 1, SHA-256',
				case1,
				'sha256',
				'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
			],
			[
				'case 1, SHA-512',
				case1,
				'sha512',
				'87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854',
			],
			[
				'case 2, SHA-256',
				case2,
				'sha256',
				'5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
			],
			[
				'case 2, SHA-512',
				case2,
				'sha512',
				'164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737',
			],
		] as const)('%s', (_label, { key, data }, algorithm, expected) => {
			expect(hmac(algorithm, key, [data]).toString('hex')).toBe(expected);
			// Fed in pieces (as schemes feed prefix and body), the digest is the same.
			expect(hmac(algorithm, key, [data.slice(0, 3), bytes(data.slice(3))]).toString('hex')).toBe(
				expected,
			);
		});

		it('case 2 through the Generic HMAC scheme (header, prefix, hex)', () => {
			const request = delivery('what do ya want for nothing?', {
				'x-signature': 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
			});
			const generic = {
				signatureHeader: 'X-Signature',
				algorithm: 'sha256' as const,
				encoding: 'hex' as const,
				prefix: 'sha256=',
				timestampHeader: '',
				signedContent: '{body}',
			};
			expect(
				verifySignature('genericHmac', request, { current: 'Jefe' }, at(0, { generic })),
			).toMatchObject({ valid: true });
		});
	});

	it("Stripe: a header built exactly per Stripe's documented scheme, and several v1 during a secret roll", () => {
		const body = '{"id":"evt_1","object":"event","type":"invoice.paid"}';
		const t = 1_700_000_000;
		const signed = (header: string) => delivery(body, { 'stripe-signature': header });
		const secret = 'whsec_stripe_current';
		expect(
			verifySignature('stripe', signed(stripeHeader(secret, t, body)), { current: secret }, at(t)),
		).toEqual(validVerdict('stripe', t));
		// During a roll Stripe signs with both secrets; a v0 entry (test mode) is ignored.
		const rolled = `${stripeHeader('whsec_other', t, body, [secret])},v0=deadbeef`;
		expect(verifySignature('stripe', signed(rolled), { current: secret }, at(t))).toMatchObject({
			valid: true,
		});
	});
});

describe('Standard Webhooks v1a (Ed25519)', () => {
	// RFC 8032, section 7.1, tests 1 and 2: the primitive the v1a entries use.
	it.each([
		[
			'test 1 (empty message)',
			'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
			'',
			'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
		],
		[
			'test 2 (one byte)',
			'3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
			'72',
			'92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
		],
	])('RFC 8032 %s', (_label, publicKeyHex, messageHex, signatureHex) => {
		const key = ed25519PublicKey(`whpk_${Buffer.from(publicKeyHex, 'hex').toString('base64')}`);
		const message = Buffer.from(messageHex, 'hex');
		const signature = Buffer.from(signatureHex, 'hex');
		expect(ed25519VerifiesAny(key, message, [signature])).toBe(true);
		const flipped = Buffer.from(signature);
		flipped[0] ^= 0x01;
		expect(ed25519VerifiesAny(key, message, [flipped])).toBe(false);
	});

	it('headers built per the specification: v1a verified with the whpk_ key, next to a v1 entry it ignores', () => {
		const pair = newEd25519Pair();
		const body = '{"type":"user.created"}';
		const headers = standardWebhooksEd25519Headers(pair, 'msg_v1a', 1_700_000_000, body);
		headers['webhook-signature'] = `v1,AAAA ${headers['webhook-signature']}`;
		const verifyWith = (current: string) =>
			verifySignature('standardWebhooks', delivery(body, headers), { current }, at(1_700_000_000));
		expect(verifyWith(pair.publicKey)).toEqual(validVerdict('standardWebhooks', 1_700_000_000));
		// A whsec_ secret does not accept a v1a entry, and a whpk_ key does not accept v1.
		expect(verifyWith('whsec_AAAA')).toMatchObject({ reason: 'signature_mismatch' });
	});

	it('a whpk_ key that is not 32 bytes is a configuration error', () => {
		expect(() => ed25519PublicKey('whpk_AAAA')).toThrow(/not a Standard Webhooks public key/);
	});
});
