import { createPublicKey, verify, type KeyObject } from 'node:crypto';

import { decodeBase64 } from './hmac';
import { SignatureConfigError } from './verdict';

const PUBLIC_KEY_PREFIX = 'whpk_';

/** Standard Webhooks' asymmetric keys: `whpk_` + base64 of the raw 32-byte Ed25519 public key. */
export function isStandardWebhooksPublicKey(secret: string): boolean {
	return secret.trim().startsWith(PUBLIC_KEY_PREFIX);
}

export function ed25519PublicKey(secret: string): KeyObject {
	const raw = decodeBase64(secret.trim().slice(PUBLIC_KEY_PREFIX.length));
	if (!raw || raw.length !== 32) {
		throw new SignatureConfigError(
			'the public key is not a Standard Webhooks public key ("whpk_" followed by the base64 of 32 bytes)',
		);
	}
	return createPublicKey({
		key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
		format: 'jwk',
	});
}

/** Whether any of the signatures is a valid Ed25519 signature of `message` under `publicKey`. */
export function ed25519VerifiesAny(
	publicKey: KeyObject,
	message: Uint8Array,
	signatures: Uint8Array[],
): boolean {
	let verified = false;
	for (const signature of signatures) {
		if (signature.length === 64 && verify(null, message, publicKey, signature)) verified = true;
	}
	return verified;
}
