/**
 * A one-key claim reads its timestamps from a json answer, written by Postgres as UTC text: each must be
 * the very value pg gives for the typed column, for every timestamptz Postgres can hold and whatever the
 * session's TimeZone.
 */
import { parseUtcTimestamp } from '../../nodes/Idempotency/transport/timestampParser';
import { testPool } from '../support/database';

const VALUES = [
	'2026-12-03 09:38:59.119979+00',
	'2026-06-01 00:00:00+00',
	'2026-06-01 00:00:00.5+00',
	'1969-12-31 23:59:59.999999+00',
	'1850-01-01 00:00:00+00',
	'0099-06-30 23:59:59.001+00',
	'0044-03-15 12:00:00.25+00 BC',
	'12026-01-01 00:00:00.5+00',
	'infinity',
	'-infinity',
];

describe('parseUtcTimestamp', () => {
	it.each(['UTC', 'Asia/Kathmandu', 'America/St_Johns', 'Europe/Amsterdam'])(
		'gives what pg gives for the typed column (session TimeZone %s)',
		async (timeZone) => {
			const pool = testPool(1);
			try {
				const client = await pool.connect();
				try {
					await client.query(`SET TimeZone = '${timeZone}'`);
					const { rows } = await client.query<{ typed: Date; answer: [string] }>(
						"SELECT v AS typed, json_build_array(v AT TIME ZONE 'UTC') AS answer FROM unnest($1::timestamptz[]) AS v",
						[VALUES],
					);
					expect(rows).toHaveLength(VALUES.length);
					for (const { typed, answer } of rows) expect(parseUtcTimestamp(answer[0])).toEqual(typed);
				} finally {
					client.release();
				}
			} finally {
				await pool.end();
			}
		},
	);
});
