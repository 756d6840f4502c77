import type { Pool } from 'pg';

import { signalSettled } from '../claims/settleSignals';
import { DB_NOW } from '../record/claimConditions';
import { namedStatement, queryStatementWithRetry } from '../statements/namedStatements';
import { SETTLE_RETRY, type RetryBudget } from '../statements/transientErrors';
import type { LimitTables } from './limitTables';

/**
 * Frees the slots these slot IDs hold, in one statement: a slot is freed only by the slot ID that holds
 * it, so a slot whose lease ended and that another execution took since (its slot ID is now the new
 * holder's), or one freed already, is left alone. Answers, per slot ID, whether it freed a slot. A slot
 * whose lease ended but that nobody took is still this holder's, and is freed. Its lease ends now: when it
 * became free, which Purge reads.
 */
const freeSql = (t: LimitTables) => `
UPDATE ${t.slots} s SET claim_token = NULL, lease_until = ${DB_NOW}
FROM unnest($1::text[]) AS f(slot_id)
WHERE s.claim_token = f.slot_id
RETURNING f.slot_id, s.key`;

/**
 * Frees the slots; waiters of this process on their keys look at once. Sent again after a lost answer,
 * a free that had committed finds nothing to free and says so: freeing is the holder's last word, so
 * it rides out a restart (SETTLE_RETRY) rather than keep the slot until its lease ends.
 */
export async function freeSlots(
	pool: Pool,
	tables: LimitTables,
	slotIds: string[],
	budget: RetryBudget = SETTLE_RETRY,
): Promise<boolean[]> {
	const { value } = await queryStatementWithRetry<{ slot_id: string; key: string }>(
		pool,
		namedStatement(freeSql(tables)),
		[slotIds],
		budget,
	);
	signalSettled(
		tables.slots,
		value.rows.map((row) => row.key),
	);
	// A slot ID given twice (the same item twice in a batch) freed its slot once: only the first says so.
	const freed = new Set(value.rows.map((row) => row.slot_id));
	return slotIds.map((slotId) => freed.delete(slotId));
}
