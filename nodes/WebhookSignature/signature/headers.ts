import { headerValue } from '../../shared/headerValue';
import type { SignatureFailure } from './verdict';

export type HeaderRead =
	{ ok: true; value: string } | { ok: false; reason: SignatureFailure; message: string };

/**
 * One header's single value. Node joins a header sent twice with ", " (and n8n passes that on), so an
 * array or a joined value is refused: no signature or timestamp header of these schemes contains ", ".
 */
export function readSingleHeader(headers: Record<string, unknown>, name: string): HeaderRead {
	const value = headerValue(headers, name);
	if (value === undefined || value === null)
		return { ok: false, reason: 'missing_header', message: `header ${name} is missing` };
	if (Array.isArray(value) || (typeof value === 'string' && value.includes(', '))) {
		return {
			ok: false,
			reason: 'malformed_header',
			message: `header ${name} was sent more than once`,
		};
	}
	const text = String(value).trim();
	if (text === '')
		return { ok: false, reason: 'malformed_header', message: `header ${name} is empty` };
	return { ok: true, value: text };
}
