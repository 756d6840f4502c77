import type { PoolClient, QueryConfig } from 'pg';

import { ClaimNotHeldError, WriteError } from '../../errors';
import { messageOf } from '../../../shared/nodeError';
import type { ClaimTable } from '../table/claimTable';
import { inTransaction } from '../statements/inTransaction';
import {
	isRefusal,
	isTransientDatabaseError,
	SETTLE_RETRY,
	withTransientRetry,
} from '../statements/transientErrors';
import {
	afterSettled,
	completeStatement,
	type SettleAnswer,
	type SettledClaim,
	type SettleRequest,
} from './settleKeys';

/** The user's business write: one SQL statement and its parameters ($1, $2, …), never interpolated. */
export interface BusinessWrite {
	text: string;
	values: unknown[];
}

export interface WriteRequest extends SettleRequest {
	claimId: string;
	write: BusinessWrite;
}

/** What the business write returned, or null where only a lost answer's aftermath says it committed. */
export interface WriteResult {
	rowCount: number | null;
	rows: Record<string, unknown>[] | null;
}

export interface WrittenClaim extends WriteResult {
	claim: SettledClaim;
}

/**
 * Runs the business write and completes the claim in one transaction, fenced by the claim: the Complete
 * goes first and locks the claim row, and only when this claim ID still holds it does the write run, so a
 * takeover waits for this transaction and then finds the key completed. Both commit or neither does: a
 * failed write rolls the Complete back with it and the claim stays held, retryable. A transaction that
 * failed on its way (the server went away, refused the write for now, or rolled it back) runs again from
 * the start; one whose COMMIT's answer was lost is told by the row: completed means it committed.
 * A claim this execution no longer holds writes nothing and throws ClaimNotHeldError.
 */
export async function completeWithWrite(
	table: ClaimTable,
	request: WriteRequest,
): Promise<WrittenClaim> {
	const statement = completeStatement(table, [request], 'holder');
	const { value, lostAttempts } = await withTransientRetry(
		table.pool,
		(client) =>
			inTransaction(
				client,
				async () => {
					const answer = statement.read(
						(await client.query(statement.text, statement.values)).rows,
					);
					const written =
						answer.settledKeys.length > 0 ? await runWrite(client, request.write) : null;
					return { answer, written };
				},
				BEGIN_CHECKING_AT_ONCE,
			),
		SETTLE_RETRY,
	);
	const [claim] = value.answer.claims;
	if (value.written) {
		await afterSettled(table, value.answer);
		return { claim, ...value.written };
	}
	// An earlier attempt reached the server and its answer was lost: the key completed since is its commit.
	if (lostAttempts > 0 && claim.state === 'completed') return { claim, rowCount: null, rows: null };
	throw new ClaimNotHeldError(notHeldMessage(request.key, value.answer));
}

/**
 * The write goes by the extended protocol even without parameters (pg sends a parameterless query as a
 * simple one, which runs every statement in the text): the server then refuses a second statement, so a
 * `…; COMMIT` or `…; ROLLBACK` can never end the transaction the Complete shares, and the answer is one
 * statement's rows. `queryMode` is pg's own, missing from its type definitions.
 */
const oneStatement = (write: BusinessWrite): QueryConfig & { queryMode: 'extended' } => ({
	text: write.text,
	values: write.values,
	queryMode: 'extended',
});

/**
 * Deferred constraints (DEFERRABLE INITIALLY DEFERRED, constraint triggers) are checked as the write ends,
 * not at COMMIT: a violation is the write's fault, reported for its item with the claim held, where at
 * COMMIT it would fail as a database error naming no item and stop the items after it. Set as the
 * transaction begins, in BEGIN's own round trip (no statement of its own per item).
 */
const BEGIN_CHECKING_AT_ONCE = 'BEGIN; SET CONSTRAINTS ALL IMMEDIATE';

async function runWrite(client: PoolClient, write: BusinessWrite): Promise<WriteResult> {
	const answer = await client
		.query(oneStatement(write))
		.then((result) => ({ result }))
		.catch((failure: unknown) => ({ failure }));
	if ('result' in answer) return { rowCount: answer.result.rowCount, rows: answer.result.rows };
	const { failure } = answer;
	// The server's state, not the statement's fault: the whole transaction runs again.
	if (isTransientDatabaseError(failure) || isRefusal(failure)) return Promise.reject(failure);
	throw new WriteError(
		`the write failed: ${messageOf(failure)}. It was rolled back with the Complete: the claim is still ` +
			'held, so the event can run again (Release or Retry Later it, or let its lease end)',
		{ cause: failure },
	);
}

function notHeldMessage(key: string, answer: SettleAnswer): string {
	const why = {
		processing: 'another execution holds it now (its lease ended and a retry took it over)',
		completed: 'it is completed already (by an earlier run of this write, or by another execution)',
		not_found: 'the key has no claim (released, purged, or never claimed)',
		released: 'it was released',
	}[answer.claims[0].state];
	return `the claim on key "${key}" is no longer this execution's: ${why}. Nothing was written`;
}
