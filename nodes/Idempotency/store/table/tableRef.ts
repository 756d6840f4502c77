import { createHash } from 'node:crypto';

import { TableError } from '../../errors';

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

export function tableRef(schema: string, table: string): TableRef {
	const cleanSchema = validateIdentifier(schema, 'Schema');
	const cleanTable = validateIdentifier(table, 'Table');
	return {
		schema: cleanSchema,
		table: cleanTable,
		qualified: `${quoteIdentifier(cleanSchema)}.${quoteIdentifier(cleanTable)}`,
		firstSeenIndex: quoteIdentifier(firstSeenIndexName(cleanTable)),
	};
}

const INDEX_SUFFIX = '_first_seen_idx';
const MAX_IDENTIFIER_BYTES = 63;

/**
 * `<table>_first_seen_idx`, or for a name too long for that, its first 39 characters and a hash of the
 * whole name: two long names that share a prefix must not share an index name, or the second table
 * would silently get no index (CREATE INDEX IF NOT EXISTS sees the first one's).
 */
function firstSeenIndexName(table: string): string {
	return suffixedIdentifier(table, INDEX_SUFFIX);
}

/**
 * `<table><suffix>` for an object that belongs to a validated table (its index, its watermarks), within
 * Postgres's 63-byte limit: a name too long keeps its start and gains a hash of the whole name, so two
 * long table names sharing a prefix never share the object.
 */
export function suffixedIdentifier(table: string, suffix: string): string {
	if (table.length + suffix.length <= MAX_IDENTIFIER_BYTES) return `${table}${suffix}`;
	const hash = createHash('sha256').update(table).digest('hex').slice(0, 8);
	return `${table.slice(0, MAX_IDENTIFIER_BYTES - suffix.length - hash.length - 1)}_${hash}${suffix}`;
}

function validateIdentifier(value: string, label: string): string {
	const trimmed = (value ?? '').trim();
	if (!IDENTIFIER.test(trimmed)) {
		throw new TableError(
			`${label} name "${value}" is not allowed: use 1–63 letters, digits or underscores, starting with a letter or underscore`,
		);
	}
	return trimmed;
}

export function quoteIdentifier(identifier: string): string {
	return `"${identifier.replace(/"/g, '""')}"`;
}
