/**
 * How a claim table stores a claim's state. Tables this version creates are *compact*: no status column
 * (a claim is processing exactly while `lease_until` is set), the claim ID and the payload fingerprint
 * as bytes, and `last_seen` / `deliveries` NULL until a repeat (NULL deliveries means one). Tables made
 * earlier keep their *original* layout and are never rewritten: `status` text, the claim ID and the
 * fingerprint as text, `deliveries` written on every row. Each statement is built for the layout the
 * catalog shows, column by column.
 */
export interface TableLayout {
	/** Decides the types Create Table If Missing gives the columns a table lacks. */
	family: 'compact' | 'original';
	/** A `status` column says processing or completed; without one, a set `lease_until` means processing. */
	statusColumn: boolean;
	/** Postgres type of `claim_token` (text when the table has none: nothing is stored). */
	claimIdType: 'text' | 'bytea';
	/** Postgres type of `fingerprint` (text when the table has none). */
	fingerprintType: 'text' | 'bytea';
}

/**
 * A table is compact when it has no status column and keeps the claim ID or the fingerprint as bytes:
 * the compact DDL creates all its columns at once. Anything else (the original layout, a table with only
 * key and first_seen) is original, and what it lacks is added in the original types.
 */
export function layoutOf(columns: ReadonlyMap<string, { type: string }>): TableLayout {
	const bytes = (name: string) => columns.get(name)?.type === 'bytea';
	const statusColumn = columns.has('status');
	return {
		family:
			!statusColumn && (bytes('claim_token') || bytes('fingerprint')) ? 'compact' : 'original',
		statusColumn,
		claimIdType: bytes('claim_token') ? 'bytea' : 'text',
		fingerprintType: bytes('fingerprint') ? 'bytea' : 'text',
	};
}
