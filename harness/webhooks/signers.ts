/**
 * The sending side of each scheme, written from the providers' documentation and independent of the node's
 * code: what a provider would put on the wire for these bytes, this secret and this time.
 */
import { createHash, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

const mac = (algorithm: string, key: string | Buffer, content: string | Buffer) =>
	createHmac(algorithm, key).update(content);

export function stripeHeader(
	secret: string,
	timestamp: number,
	body: string | Buffer,
	extraSecrets: string[] = [],
): string {
	const signed = Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(body)]);
	const v1 = [secret, ...extraSecrets].map(
		(key) => `v1=${mac('sha256', key, signed).digest('hex')}`,
	);
	return [`t=${timestamp}`, ...v1].join(',');
}

export function githubHeader(secret: string, body: string | Buffer): string {
	return `sha256=${mac('sha256', secret, Buffer.from(body)).digest('hex')}`;
}

export function shopifyHeader(secret: string, body: string | Buffer): string {
	return mac('sha256', secret, Buffer.from(body)).digest('base64');
}

export function slackHeaders(
	secret: string,
	timestamp: number,
	body: string | Buffer,
): Record<string, string> {
	const signed = Buffer.concat([Buffer.from(`v0:${timestamp}:`), Buffer.from(body)]);
	return {
		'x-slack-request-timestamp': String(timestamp),
		'x-slack-signature': `v0=${mac('sha256', secret, signed).digest('hex')}`,
	};
}

/** `whsec_` + base64 key, as Standard Webhooks senders hand it out. */
export function standardWebhooksHeaders(
	secret: string,
	id: string,
	timestamp: number,
	body: string | Buffer,
	prefix: 'webhook' | 'svix' = 'webhook',
): Record<string, string> {
	const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
	const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]);
	return {
		[`${prefix}-id`]: id,
		[`${prefix}-timestamp`]: String(timestamp),
		[`${prefix}-signature`]: `v1,${mac('sha256', key, signed).digest('base64')}`,
	};
}

/** Form POST: URL + params sorted by name, name+value, HMAC-SHA1 base64. */
export function twilioFormSignature(
	authToken: string,
	url: string,
	params: Record<string, string>,
): string {
	const content =
		url +
		Object.keys(params)
			.sort()
			.map((name) => name + params[name])
			.join('');
	return mac('sha1', authToken, content).digest('base64');
}

/** JSON POST: Twilio appends bodySHA256 to the URL and signs the URL alone. */
export function twilioJsonSignature(
	authToken: string,
	url: string,
	body: string,
): { signature: string; bodySHA256: string } {
	const bodySHA256 = createHash('sha256').update(body).digest('hex');
	const signedUrl = `${url}${url.includes('?') ? '&' : '?'}bodySHA256=${bodySHA256}`;
	return { signature: mac('sha1', authToken, signedUrl).digest('base64'), bodySHA256 };
}

export function genericHeader(
	algorithm: string,
	encoding: 'hex' | 'base64',
	secret: string,
	content: Buffer,
): string {
	return mac(algorithm, secret, content).digest(encoding);
}

export interface Ed25519Pair {
	/** `whpk_` + base64 of the raw 32-byte public key, as Standard Webhooks hands it to receivers. */
	publicKey: string;
	privateKey: KeyObject;
}

export function newEd25519Pair(): Ed25519Pair {
	const { publicKey, privateKey } = generateKeyPairSync('ed25519');
	const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
	return { publicKey: `whpk_${raw.toString('base64')}`, privateKey };
}

/** Standard Webhooks `v1a`: an Ed25519 signature of `{id}.{timestamp}.{body}`. */
export function standardWebhooksEd25519Headers(
	pair: Ed25519Pair,
	id: string,
	timestamp: number,
	body: string | Buffer,
): Record<string, string> {
	const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]);
	return {
		'webhook-id': id,
		'webhook-timestamp': String(timestamp),
		'webhook-signature': `v1a,${sign(null, signed, pair.privateKey).toString('base64')}`,
	};
}
