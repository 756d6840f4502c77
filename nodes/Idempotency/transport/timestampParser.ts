import { types, type CustomTypesConfig } from 'pg';

const TIMESTAMPTZ_OID = 1184;

/**
 * pg parses every timestamptz of every row. The rows a claim returns share few distinct values (all keys
 * of one statement get the same now()), so remembering the last value saves most of that work in big
 * batches. Results are the same Date values pg would give.
 */
export function timestampParsingTypes(): CustomTypesConfig {
	const parse = types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => Date;
	let lastText: string | undefined;
	let lastDate: Date | undefined;
	const parseRemembered = (text: string): Date => {
		if (text !== lastText) {
			lastText = text;
			lastDate = parse(text);
		}
		// pg reads 'infinity' as the number Infinity (a parked event's lease): passed on as pg gives it.
		if (!(lastDate instanceof Date)) return lastDate as unknown as Date;
		// A fresh Date each time: callers may keep or change the object they get.
		return new Date(lastDate.getTime());
	};
	return {
		getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
			oid === TIMESTAMPTZ_OID && format !== 'binary'
				? parseRemembered
				: types.getTypeParser(oid, format ?? 'text')) as CustomTypesConfig['getTypeParser'],
	};
}

const parseTimestamptz = types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => Date;

/**
 * A timestamptz that Postgres wrote as UTC text without a zone (`ts AT TIME ZONE 'UTC'` inside json:
 * `2026-12-03T09:38:59.119979`), as the Date pg would give for the typed column: V8 reads the common
 * form (and, like pg, drops the digits below a millisecond); pg's own parser reads the rest (infinity,
 * BC dates, years past 9999).
 */
export function parseUtcTimestamp(text: string): Date {
	const date = new Date(`${text}Z`);
	if (!Number.isNaN(date.getTime())) return date;
	const bc = text.endsWith(' BC');
	const dateTime = (bc ? text.slice(0, -3) : text).replace('T', ' ');
	return parseTimestamptz(dateTime.includes(' ') ? `${dateTime}+00${bc ? ' BC' : ''}` : dateTime);
}
