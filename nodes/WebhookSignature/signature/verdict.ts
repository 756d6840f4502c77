import { PackageError } from '../../shared/packageError';

/** Why a delivery was refused; stable codes a workflow can branch on. */
export type SignatureFailure =
	| 'missing_header'
	| 'malformed_header'
	| 'no_raw_body'
	| 'stale_timestamp'
	| 'future_timestamp'
	| 'signature_mismatch'
	| 'unknown_scheme'
	/** Genuinely signed, but what n8n made of the request is not what was signed (multipart, another content type). */
	| 'unsigned_body'
	/** A setting makes every delivery unverifiable (an empty secret, no public URL); the request itself was not judged. */
	| 'configuration_error';

/** Which configured secret verified the delivery: `previous` means a rotation is still under way. */
export type SecretUsed = 'current' | 'previous';

export type SignatureVerdict =
	| { valid: true; scheme: string; secretUsed: SecretUsed; timestamp: number | null }
	| { valid: false; scheme: string; reason: SignatureFailure; message: string };

/** What a scheme reads from one delivery. Header names are matched case-insensitively. */
export interface SignedRequest {
	/** The exact request bytes (Webhook node, Raw Body option); never a re-serialised body. */
	rawBody: Uint8Array | undefined;
	headers: Record<string, unknown>;
	/** The parsed query string (Twilio's JSON variant carries bodySHA256 there). */
	query?: Record<string, unknown>;
}

/** The secret and, during a rotation, the one before it. Neither ever appears in a verdict or an error. */
export interface SigningSecrets {
	current: string;
	previous?: string;
}

/** A scheme's settings the user cannot get wrong per delivery; one clock for a whole execution. */
export interface VerifyOptions {
	/** Unix time in seconds, read once per execution. */
	nowSeconds: number;
	/** How far a signed timestamp may lie from now, in either direction. */
	toleranceSeconds: number;
}

/** How each scheme is declared: one delivery, the secrets and the scheme's settings in, a verdict out. */
export type SchemeVerifier<Settings extends VerifyOptions = VerifyOptions> = (
	request: SignedRequest,
	secrets: SigningSecrets,
	settings: Settings,
) => SignatureVerdict;

/** A setting that makes every delivery unverifiable (bad secret format, no public URL): a configuration error, not a forged request. */
export class SignatureConfigError extends PackageError {}

export function refuse(
	scheme: string,
	reason: SignatureFailure,
	message: string,
): SignatureVerdict {
	return { valid: false, scheme, reason, message };
}

/** A named header is present but not in its scheme's format: `header <name> <problem>`. */
export function malformedHeader(scheme: string, header: string, problem: string): SignatureVerdict {
	return refuse(scheme, 'malformed_header', `header ${header} ${problem}`);
}

export const RAW_BODY_MISSING =
	'no raw request bytes: turn on the Webhook node\'s "Raw Body" option (signatures cover the exact bytes; re-serialised JSON is never verified)';
