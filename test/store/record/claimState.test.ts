/**
 * A one-key claim statement answers one json array: `fresh`, then claimState's columns in their order,
 * timestamps as UTC text without a zone. Reading it gives the same row a batch statement's typed columns
 * give.
 */
import {
	readSingleAnswer,
	STATE_COLUMNS,
} from '../../../nodes/Idempotency/store/record/claimState';

describe('readSingleAnswer', () => {
	it('reads fresh and then each state column in the order claimState names them', () => {
		const answer = [
			false,
			'2026-06-01T00:00:00.123456',
			'2026-06-01T00:05:00',
			3,
			true,
			false,
			'2026-06-01T00:10:00',
			false,
			{ statusCode: 200 },
		];
		expect(answer).toHaveLength(1 + STATE_COLUMNS.length);
		expect(readSingleAnswer(answer)).toEqual({
			fresh: false,
			state: {
				first_seen: new Date('2026-06-01T00:00:00.123Z'),
				last_seen: new Date('2026-06-01T00:05:00Z'),
				deliveries: 3,
				processing: true,
				mine: false,
				lease_until: new Date('2026-06-01T00:10:00Z'),
				mismatch: false,
				response: { statusCode: 200 },
			},
		});
	});

	it('keeps what a table or a mode cannot fill as null, and reads infinity as pg does', () => {
		const fresh = [true, '2026-06-01T00:00:00', null, null, null, null, 'infinity', null, null];
		const { fresh: inserted, state } = readSingleAnswer(fresh);
		expect(inserted).toBe(true);
		expect(state.first_seen).toEqual(new Date('2026-06-01T00:00:00Z'));
		expect(state.lease_until?.valueOf()).toBe(Infinity);
		expect([state.last_seen, state.deliveries, state.mine, state.response]).toEqual([
			null,
			null,
			null,
			null,
		]);
	});
});
