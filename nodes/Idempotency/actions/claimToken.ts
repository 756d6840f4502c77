import { randomBytes } from 'node:crypto';

/**
 * A fresh claim ID: 96 random bits as 16 base64url characters. Unguessable is all it must be (a holder
 * proves itself with it); a UUID's 36 characters cost a claim-once row, which keeps its ID for good,
 * 20 bytes more. Rows claimed with a UUID keep working: the ID is compared, never parsed.
 */
export function newClaimToken(): string {
	return randomBytes(12).toString('base64url');
}
