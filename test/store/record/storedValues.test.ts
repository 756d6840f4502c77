/**
 * How a claim ID and a payload fingerprint are stored: as text in a table of the original layout, as
 * bytes in a compact one. Whatever the form of the value offered, it must still match itself and only
 * itself; fingerprints made in different ways are never compared.
 */
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import {
	fingerprintsDiffer,
	storedClaimId,
	storedFingerprint,
} from '../../../nodes/Idempotency/store/record/storedValues';
import type { TableLayout } from '../../../nodes/Idempotency/store/record/tableLayout';

const COMPACT: TableLayout = {
	family: 'compact',
	statusColumn: false,
	claimIdType: 'bytea',
	fingerprintType: 'bytea',
};
const ORIGINAL: TableLayout = {
	family: 'original',
	statusColumn: true,
	claimIdType: 'text',
	fingerprintType: 'text',
};
const HASH = '0123456789abcdef0123456789abcdef';

describe('storedClaimId', () => {
	it('keeps the text in a table of the original layout', () => {
		expect(storedClaimId(ORIGINAL, 'AAAAAAAAAAAAAAAA')).toBe('AAAAAAAAAAAAAAAA');
	});

	it('stores the 12 bytes a claim ID made by the node spells in a compact table', () => {
		const claimId = newClaimId();
		expect(storedClaimId(COMPACT, claimId)).toEqual(Buffer.from(claimId, 'base64url'));
	});

	it('stores any other text (a UUID, an ID typed by hand) as its UTF-8 bytes, never as another ID', () => {
		const uuid = '6f1c2a9e-0d4b-4c3e-9a57-1f2e3d4c5b6a';
		expect(storedClaimId(COMPACT, uuid)).toEqual(Buffer.from(uuid, 'utf8'));
		// 16 characters, but not as the node writes base64url: kept as text bytes, so it matches only itself.
		expect(storedClaimId(COMPACT, 'AAAAAAAAAAAAAAA=')).toEqual(Buffer.from('AAAAAAAAAAAAAAA='));
	});
});

describe('storedFingerprint', () => {
	it('keeps the text in a table of the original layout', () => {
		expect(storedFingerprint(ORIGINAL, `json:${HASH}`)).toBe(`json:${HASH}`);
	});

	it('stores its kind as one byte and its 32 hex digits as 16 bytes in a compact table', () => {
		expect(storedFingerprint(COMPACT, `json:${HASH}`)).toEqual(
			Buffer.concat([Buffer.of(1), Buffer.from(HASH, 'hex')]),
		);
		expect(storedFingerprint(COMPACT, `raw:${HASH}`)).toEqual(
			Buffer.concat([Buffer.of(2), Buffer.from(HASH, 'hex')]),
		);
	});

	it('stores a fingerprint of another form as its UTF-8 bytes after the kind byte', () => {
		expect(storedFingerprint(COMPACT, 'json:not-hex')).toEqual(
			Buffer.concat([Buffer.of(1), Buffer.from('not-hex')]),
		);
		expect(storedFingerprint(COMPACT, 'something')).toEqual(
			Buffer.concat([Buffer.of(0), Buffer.from('something')]),
		);
	});
});

describe('fingerprintsDiffer', () => {
	it.each([
		['no stored fingerprint', null, `json:${HASH}`, false],
		['none offered', `json:${HASH}`, null, false],
		['the same payload', `json:${HASH}`, `json:${HASH}`, false],
		['made in different ways (raw and json)', `raw:${HASH}`, `json:${'f'.repeat(32)}`, false],
		[
			'a whole SHA-256 stored before fingerprints were shortened',
			`json:${HASH}${HASH}`,
			`json:${HASH}`,
			false,
		],
		['another payload', `json:${HASH}`, `json:${'f'.repeat(32)}`, true],
	])('%s: %s', (_, stored, offered, differ) => {
		expect(fingerprintsDiffer(stored, offered)).toBe(differ);
	});
});
