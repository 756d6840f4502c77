import { verifyBodyHmac } from './bodyHmac';
import { decodeBase64 } from './hmac';
import type { SignedRequest, SignatureVerdict, SigningSecrets } from './verdict';

/**
 * Shopify: `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body with the app's client secret.
 * No timestamp is signed; X-Shopify-Event-Id identifies the event for the claim.
 */
export function verifyShopify(request: SignedRequest, secrets: SigningSecrets): SignatureVerdict {
	return verifyBodyHmac(
		{
			scheme: 'shopify',
			header: 'X-Shopify-Hmac-Sha256',
			readDigest: (header) => {
				const digest = decodeBase64(header);
				return digest?.length === 32 ? digest : undefined;
			},
			format: 'a base64 SHA-256 digest',
		},
		request,
		secrets,
	);
}
