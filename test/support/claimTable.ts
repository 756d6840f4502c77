import type { Pool } from 'pg';

import { newClaimToken } from '../../nodes/Idempotency/actions/claimToken';
import { claimBatch } from '../../nodes/Idempotency/store/claimBatch';
import type {
	ClaimOptions,
	ClaimOutcome,
	ClaimRequest,
} from '../../nodes/Idempotency/store/claimOutcome';
import { openClaimTable, type ClaimTable } from '../../nodes/Idempotency/store/claimTable';
import { tableRef } from '../../nodes/Idempotency/store/tableRef';
import { poolFor } from '../../nodes/Idempotency/transport/poolRegistry';
import { testCredentials, uniqueTableName } from './database';

export type TestClaimTable = ClaimTable & {
	claim(
		keys: Array<string | ClaimRequest>,
		options?: Partial<ClaimOptions>,
	): Promise<ClaimOutcome[]>;
};

/** A fresh claim table behind the node's own pool registry, with a claim helper bound to it. */
export async function freshClaimTable(
	createIfMissing = true,
	table = uniqueTableName('claims'),
): Promise<TestClaimTable> {
	const opened = await openClaimTable(await poolFor(testCredentials()), tableRef('public', table), {
		createIfMissing,
		privileges: [],
	});
	return withClaimHelper(opened);
}

export function withClaimHelper(table: ClaimTable): TestClaimTable {
	return {
		...table,
		claim: (keys, options = {}) =>
			claimBatch(
				table,
				keys.map((k) => (typeof k === 'string' ? { key: k, fingerprint: null } : k)),
				{ mode: 'once', leaseSeconds: 60, countRepeats: true, token: newClaimToken(), ...options },
			),
	};
}

export async function rowsOf(
	pool: Pool,
	qualified: string,
): Promise<Array<Record<string, unknown>>> {
	return (await pool.query(`SELECT * FROM ${qualified} ORDER BY key`)).rows;
}
