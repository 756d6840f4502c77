import { bodyHmacVerifier } from './bodyHmac';
import { decodeHex } from './hmac';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body. GitHub signs no timestamp,
 * so a replay is only stopped by the claim (X-GitHub-Delivery stays the same on every redelivery).
 */
export const verifyGitHub = bodyHmacVerifier({
	scheme: 'github',
	header: 'X-Hub-Signature-256',
	readDigest: (header) => {
		const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header);
		return match ? decodeHex(match[1]) : undefined;
	},
	format: '"sha256=" followed by 64 hex digits',
});
