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
		// A fresh Date each time: callers may keep or change the object they get.
		return new Date(lastDate!.getTime());
	};
	return {
		getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
			oid === TIMESTAMPTZ_OID && format !== 'binary'
				? parseRemembered
				: types.getTypeParser(oid, format ?? 'text')) as CustomTypesConfig['getTypeParser'],
	};
}
