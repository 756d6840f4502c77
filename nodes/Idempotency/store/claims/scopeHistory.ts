import type { Pool } from 'pg';

import { WatermarkError } from '../../errors';
import type { WatermarkKind } from '../watermark/advanceWatermark';
import type { TableRef } from '../table/tableRef';
import { UNDEFINED_TABLE } from '../table/createOnDemand';
import type { WatermarkRef } from '../watermark/watermarkTable';

/** What a polled scope keeps: a key per value (Value Is New) or one watermark of numbers or dates. */
export type ScopeKeeps = 'keys' | WatermarkKind;

const MODE_NAMES: Record<ScopeKeeps, string> = {
	keys: 'Value Is New',
	number: 'Value Is Higher than Any Previous Value',
	date: 'Value Is a Date Later than Any Previous Date',
};

/**
 * Refuses a poll whose Keep Items Where differs from what its scope already keeps, as Remove Duplicates
 * refuses it: the other mode would start the scope's history fresh and pass every item again. The
 * watermark is one primary-key read; the keys are looked for only while the scope has no watermark yet
 * (the scope's first poll in a watermark mode), a scan that stops at the first key it finds.
 */
export async function checkScopeKeeps(
	pool: Pool,
	claims: TableRef,
	marks: WatermarkRef,
	scope: string,
	keyPrefix: string,
	wanted: ScopeKeeps,
): Promise<void> {
	const mark = await watermarkKind(pool, marks, scope);
	if (wanted === 'keys') {
		if (mark !== null) throw switchedMode(scope, mark, wanted);
		return;
	}
	// A watermark of the other kind is refused by the statement that compares with it.
	if (mark === null && (await holdsKeys(pool, claims, keyPrefix)))
		throw switchedMode(scope, 'keys', wanted);
}

function switchedMode(scope: string, kept: ScopeKeeps, wanted: ScopeKeeps): WatermarkError {
	return new WatermarkError(
		`the scope "${scope}" holds the history of Keep Items Where "${MODE_NAMES[kept]}", so "${MODE_NAMES[wanted]}" would ` +
			'start it fresh and pass items again: run Clear Deduplication History on the scope first, or give this node another Scope',
	);
}

async function watermarkKind(
	pool: Pool,
	marks: WatermarkRef,
	scope: string,
): Promise<WatermarkKind | null> {
	const rows = await rowsOrNone<{ kind: WatermarkKind }>(
		pool,
		`SELECT kind FROM ${marks.qualified} WHERE scope = $1`,
		[scope],
	);
	return rows[0]?.kind ?? null;
}

async function holdsKeys(pool: Pool, claims: TableRef, keyPrefix: string): Promise<boolean> {
	const rows = await rowsOrNone(
		pool,
		`SELECT 1 FROM ${claims.qualified} WHERE starts_with(key, $1) LIMIT 1`,
		[keyPrefix],
	);
	return rows.length > 0;
}

/** A table that does not exist keeps nothing. */
async function rowsOrNone<Row extends object>(
	pool: Pool,
	sql: string,
	values: unknown[],
): Promise<Row[]> {
	let failure: unknown;
	try {
		return (await pool.query<Row>(sql, values)).rows;
	} catch (error) {
		failure = error;
	}
	if ((failure as { code?: string })?.code === UNDEFINED_TABLE) return [];
	throw failure;
}
