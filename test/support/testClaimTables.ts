import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { newClaimId } from '../../nodes/Idempotency/store/record/claimId';
import { claimBatch } from '../../nodes/Idempotency/store/claims/claimBatch';
import type {
	ClaimOptions,
	ClaimOutcome,
	ClaimRequest,
} from '../../nodes/Idempotency/store/record/claimOutcome';
import {
	openClaimTable,
	type ClaimTable,
	type TableNeeds,
} from '../../nodes/Idempotency/store/table/claimTable';
import {
	completeClaims,
	releaseClaims,
	type SettleRequest,
} from '../../nodes/Idempotency/store/claims/settleKeys';
import { tableRef } from '../../nodes/Idempotency/store/table/tableRef';
import {
	advanceWatermark,
	type WatermarkKind,
} from '../../nodes/Idempotency/store/watermark/advanceWatermark';
import { watermarkRef } from '../../nodes/Idempotency/store/watermark/watermarkTable';
import { poolFor } from '../../nodes/Idempotency/transport/poolRegistry';
import { HASH_PARTITIONED_DDL, LAYOUT_COLUMNS, ORIGINAL_LAYOUT_DDL } from './claimTableSql';
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
				{ mode: 'once', leaseSeconds: 60, countRepeats: true, claimId: newClaimId(), ...options },
			),
	};
}

/** A claim table in the original layout (status text, claim ID and fingerprint as text), opened as the node opens it. */
export async function originalLayoutClaimTable(): Promise<TestClaimTable> {
	const name = uniqueTableName('original');
	const pool = await poolFor(testCredentials());
	for (const statement of ORIGINAL_LAYOUT_DDL(name)) await pool.query(statement);
	return freshClaimTable(true, name);
}

/** A hash-partitioned claim table of either layout, opened as the node opens it. */
export async function hashPartitionedClaimTable(
	layout: keyof typeof LAYOUT_COLUMNS,
): Promise<TestClaimTable> {
	const name = uniqueTableName('parted');
	const pool = await poolFor(testCredentials());
	for (const statement of HASH_PARTITIONED_DDL(name, LAYOUT_COLUMNS[layout]))
		await pool.query(statement);
	return freshClaimTable(true, name);
}

/** What a table with every optional column can do, and one with only key and first_seen. */
export const EVERY_CAPABILITY = {
	counters: true,
	leases: true,
	fingerprint: true,
	responses: true,
	events: false,
	eventScope: false,
	steps: false,
};
export const NO_CAPABILITY = {
	counters: false,
	leases: false,
	fingerprint: false,
	responses: false,
	events: false,
	eventScope: false,
	steps: false,
};

/** Whether each claim was completed: it is, now, whoever completed it. */
export async function completeKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	return (await completeClaims(table, requests)).map(({ state }) => state === 'completed');
}

/** Whether each claim was released (its row deleted by this call). */
export async function releaseKeys(
	table: ClaimTable,
	requests: SettleRequest[],
): Promise<boolean[]> {
	return (await releaseClaims(table, requests)).map(({ state }) => state === 'released');
}

/** Gives `scope` a watermark of `kind` beside the claim table (its table made when missing). */
export async function markScope(
	table: ClaimTable,
	scope: string,
	kind: WatermarkKind,
	value: string,
): Promise<void> {
	await advanceWatermark(table.pool, watermarkRef(table.ref), {
		scope,
		kind,
		values: [value],
		claimId: newClaimId(),
		createIfMissing: true,
	});
}
