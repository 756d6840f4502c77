import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import type { Pool } from 'pg';

import { limitTables, withLimitTables, type LimitTables } from '../../store/limits/limitTables';
import { poolFor } from '../../transport/poolRegistry';
import { databaseFailure } from '../failures/databaseFailure';
import { readCredentials } from '../parameters/readCredentials';
import { readTableRef } from '../parameters/readTableRef';

/**
 * Runs an operation's statements on the node's limit tables (made first where they are missing and
 * `createIfMissing` allows; else the error advises `whenMissing`, if given). A database failure fails the
 * items at `indexes` into `failed` (the output that keeps them from the work; `regularOutputIsSafe` as
 * databaseFailure says), and the answer is undefined.
 */
export async function onLimitTables<T>(
	context: IExecuteFunctions,
	indexes: number[],
	failed: INodeExecutionData[],
	work: (pool: Pool, tables: LimitTables) => Promise<T>,
	{
		createIfMissing,
		regularOutputIsSafe,
		whenMissing,
	}: { createIfMissing: boolean; regularOutputIsSafe: boolean; whenMissing?: string },
): Promise<T | undefined> {
	const credentials = await readCredentials(context);
	const tables = limitTables(readTableRef(context));
	try {
		const pool = await poolFor(credentials);
		return await withLimitTables(
			pool,
			tables,
			createIfMissing,
			() => work(pool, tables),
			whenMissing,
		);
	} catch (error) {
		failed.push(...databaseFailure(context, error, credentials, indexes, regularOutputIsSafe));
		return undefined;
	}
}
