import { verifyGenericHmac, type GenericHmacSettings } from './genericHmac';
import { verifyGitHub } from './github';
import { verifyShopify } from './shopify';
import { verifySlack } from './slack';
import { standardWebhooksVerifier } from './standardWebhooks';
import { verifyStripe } from './stripe';
import { verifyTwilio } from './twilio';
import {
	refuse,
	type SchemeVerifier,
	type SignedRequest,
	type SignatureVerdict,
	type SigningSecrets,
	type VerifyOptions,
} from './verdict';

/** Everything a scheme may need besides the request and the secrets; each scheme reads its own part. */
export interface SchemeSettings extends VerifyOptions {
	publicUrl?: string;
	generic?: GenericHmacSettings;
}

const VERIFIERS = {
	stripe: verifyStripe,
	github: verifyGitHub,
	shopify: verifyShopify,
	slack: verifySlack,
	standardWebhooks: standardWebhooksVerifier('webhook'),
	svix: standardWebhooksVerifier('svix'),
	twilio: verifyTwilio,
	genericHmac: verifyGenericHmac,
} satisfies Record<string, SchemeVerifier<SchemeSettings>>;

export type SchemeName = keyof typeof VERIFIERS;

const SCHEME_NAMES = Object.keys(VERIFIERS) as SchemeName[];

/**
 * Pure: bytes, headers, secrets and a clock in, a verdict out. Throws SignatureConfigError only for a
 * setting that makes every delivery unverifiable; a bad delivery is always a verdict.
 */
export function verifySignature(
	scheme: string,
	request: SignedRequest,
	secrets: SigningSecrets,
	settings: SchemeSettings,
): SignatureVerdict {
	if (!Object.prototype.hasOwnProperty.call(VERIFIERS, scheme))
		return refuse(
			scheme,
			'unknown_scheme',
			`unknown signature scheme "${scheme}"; one of ${SCHEME_NAMES.join(', ')}`,
		);
	return VERIFIERS[scheme as SchemeName](request, secrets, settings);
}
