import type { Pool } from 'pg';

import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { newClaimToken } from '../../nodes/Idempotency/actions/claimToken';
import { claimBatch } from '../../nodes/Idempotency/store/claimBatch';
import type {
	ClaimOptions,
	ClaimOutcome,
	ClaimRequest,
} from '../../nodes/Idempotency/store/claimOutcome';
import {
	openClaimTable,
	type ClaimTable,
	type TableNeeds,
} from '../../nodes/Idempotency/store/claimTable';
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
export function freshClaimTable(
	createIfMissing = true,
	table = uniqueTableName('claims'),
): Promise<TestClaimTable> {
	return openTestClaimTable(table, { createIfMissing, privileges: [] });
}

/** public.`name` opened as the node opens it (with `needs`, through the pool for `credentials`). */
export async function openTestClaimTable(
	name: string,
	needs: TableNeeds,
	credentials: PostgresCredentials = testCredentials(),
): Promise<TestClaimTable> {
	return withClaimHelper(
		await openClaimTable(await poolFor(credentials), tableRef('public', name), needs),
	);
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

/** Creates a table with only `key` and `first_seen`, as the original claim template does; returns its name. */
export async function createKeyAndFirstSeenTable(
	pool: Pool,
	name = uniqueTableName('keyonly'),
): Promise<string> {
	await pool.query(
		`CREATE TABLE ${name} (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	return name;
}

export async function rowsOf(
	pool: Pool,
	qualified: string,
): Promise<Array<Record<string, unknown>>> {
	return (await pool.query(`SELECT * FROM ${qualified} ORDER BY key`)).rows;
}
