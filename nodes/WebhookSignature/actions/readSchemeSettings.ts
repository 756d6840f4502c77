import type { IExecuteFunctions } from 'n8n-workflow';

import { messageOf, nodeError } from '../../shared/nodeError';
import type { HmacAlgorithm } from '../signature/hmac';
import type { SchemeSettings } from '../signature/schemes';
import { SignatureConfigError } from '../signature/verdict';

/**
 * One node parameter; a value n8n cannot resolve (an expression that fails) is a configuration error that
 * names the field as the editor shows it.
 */
export function readParameter<T>(
	context: IExecuteFunctions,
	name: string,
	index: number,
	fallback: T,
	label: string,
): T {
	try {
		return context.getNodeParameter(name, index, fallback) as T;
	} catch (error) {
		// n8n's own error (an expression that fails), named by the field it was reading.
		throw nodeError(context.getNode(), error, {
			message: `${label}: ${messageOf(error)}`,
			itemIndex: index,
		});
	}
}

/** The settings the item's scheme reads, with a tolerance that can check something. */
export function readSchemeSettings(
	context: IExecuteFunctions,
	index: number,
	scheme: string,
	nowSeconds: number,
): SchemeSettings {
	const read = <T>(name: string, fallback: T, label: string) =>
		readParameter(context, name, index, fallback, label);
	const settings: SchemeSettings = {
		nowSeconds,
		toleranceSeconds: read('toleranceSeconds', 300, 'Tolerance (Seconds)'),
	};
	if (!(settings.toleranceSeconds > 0))
		throw new SignatureConfigError(
			`Tolerance (Seconds) must be a positive number of seconds, got ${settings.toleranceSeconds}`,
		);
	if (scheme === 'twilio') settings.publicUrl = read('publicUrl', '', 'Public URL');
	if (scheme === 'genericHmac') {
		settings.generic = {
			signatureHeader: read('signatureHeader', 'X-Signature', 'Signature Header'),
			algorithm: read<HmacAlgorithm>('algorithm', 'sha256', 'Algorithm'),
			encoding: read<'hex' | 'base64'>('encoding', 'hex', 'Encoding'),
			prefix: read('prefix', '', 'Prefix'),
			timestampHeader: read('timestampHeader', '', 'Timestamp Header').trim(),
			signedContent: read('signedContent', '{body}', 'Signed Content'),
		};
	}
	return settings;
}
