/**
 * Kept events made as the claim node makes them (a lease claim that keeps its event), at a chosen clock:
 * a claim made long ago holds a lease that has ended (due), one made now holds a running lease. No row
 * is edited and no test waits for real time to pass.
 */
import type { ClaimOutcome } from '../../nodes/Idempotency/store/record/claimOutcome';
import { CLAIM_ID_COLUMNS } from '../../nodes/Idempotency/store/table/tableSchema';
import { uniqueTableName } from './database';
import { openTestClaimTable, type TestClaimTable } from './testClaimTables';

/** A clock so far back that every lease a claim took at it has ended. */
export const LONG_AGO = new Date('2000-01-01T00:00:00Z');

/** A fresh claim table with its event table, opened as Claim With Lease and Keep Event open it. */
export function eventKeepingTable(): Promise<TestClaimTable> {
	return openTestClaimTable(uniqueTableName('inbox'), {
		createIfMissing: true,
		columns: CLAIM_ID_COLUMNS,
		privileges: [],
		events: true,
	});
}

export interface KeepOptions {
	/** The claim's clock: LONG_AGO makes the event due at once; the database's now() when left out. */
	now?: Date;
	leaseSeconds?: number;
	scope?: string | null;
	maxAttempts?: number;
	body?: string;
}

/** Claims `key` with a lease, keeping its event; the outcome names the holder's claim ID. */
export async function keepEvent(
	table: TestClaimTable,
	key: string,
	options: KeepOptions = {},
): Promise<ClaimOutcome> {
	const event = {
		body: Buffer.from(options.body ?? JSON.stringify({ key })),
		contentType: 'application/json',
		headers: JSON.stringify({ 'x-event': key }),
		scope: options.scope ?? null,
	};
	const [outcome] = await table.claim([{ key, fingerprint: null, event }], {
		mode: 'lease',
		leaseSeconds: options.leaseSeconds ?? 3600,
		maxAttempts: options.maxAttempts ?? 5,
		now: options.now,
	});
	return outcome;
}
