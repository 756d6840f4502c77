import { bodyHmacVerifier } from './bodyHmac';
import { decodeBase64 } from './hmac';

/**
 * Shopify: `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body with the app's client secret.
 * No timestamp is signed; X-Shopify-Event-Id identifies the event for the claim.
 */
export const verifyShopify = bodyHmacVerifier({
	scheme: 'shopify',
	header: 'X-Shopify-Hmac-Sha256',
	readDigest: (header) => {
		const digest = decodeBase64(header);
		return digest?.length === 32 ? digest : undefined;
	},
	format: 'a base64 SHA-256 digest',
});
