/**
 * The claim ID: what a holder proves itself with (Complete, Release, Retry Later name it). It must be
 * unguessable and short; a compact table keeps its 12 bytes.
 */
import { CLAIM_ID_BYTES, newClaimId } from '../../../nodes/Idempotency/store/record/claimId';

describe('newClaimId', () => {
	it('is 16 base64url characters that spell 12 bytes', () => {
		const claimId = newClaimId();
		expect(claimId).toMatch(/^[A-Za-z0-9_-]{16}$/);
		const bytes = Buffer.from(claimId, 'base64url');
		expect(bytes).toHaveLength(CLAIM_ID_BYTES);
		expect(bytes.toString('base64url')).toBe(claimId);
	});

	it('never repeats, also past the 256 IDs each refill of its random bytes gives', () => {
		const claimIds = Array.from({ length: 2_000 }, () => newClaimId());
		expect(new Set(claimIds).size).toBe(claimIds.length);
	});
});
