/** A schema-qualified table name that was validated, so it can be spliced into SQL quoted. */
export interface TableRef {
	schema: string;
	table: string;
	/** `"schema"."table"`, safe to put in SQL text. */
	qualified: string;
	/** Quoted name of the index on first_seen that purges use. */
	firstSeenIndex: string;
}

// Plain SQL identifiers only; anything else (quotes, dots, spaces, semicolons) is refused rather than escaped,
// so a typo or an injection attempt fails loudly before any SQL is sent.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export class InvalidIdentifierError extends Error {}

export function tableRef(schema: string, table: string): TableRef {
	const cleanSchema = validateIdentifier(schema, 'Schema');
	const cleanTable = validateIdentifier(table, 'Table');
	return {
		schema: cleanSchema,
		table: cleanTable,
		qualified: `${quoteIdentifier(cleanSchema)}.${quoteIdentifier(cleanTable)}`,
		// Postgres truncates names at 63 bytes; keep the suffix readable.
		firstSeenIndex: quoteIdentifier(`${cleanTable.slice(0, 48)}_first_seen_idx`),
	};
}

function validateIdentifier(value: string, label: string): string {
	const trimmed = (value ?? '').trim();
	if (!IDENTIFIER.test(trimmed)) {
		throw new InvalidIdentifierError(
			`${label} name "${value}" is not allowed: use 1–63 letters, digits or underscores, starting with a letter or underscore`,
		);
	}
	return trimmed;
}

function quoteIdentifier(identifier: string): string {
	return `"${identifier.replace(/"/g, '""')}"`;
}
