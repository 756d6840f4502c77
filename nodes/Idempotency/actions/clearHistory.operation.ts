import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { checkScope, scopePrefix } from '../key/scope';
import { clearScope } from '../store/clearScope';
import { watermarkRef } from '../store/watermarkTable';
import { poolFor } from '../transport/poolRegistry';
import { databaseFailure } from './failures/databaseFailure';
import { readCredentials } from './parameters/readCredentials';
import { readBatchSize } from './purge.operation';
import { readTableRef } from './parameters/readTableRef';

/**
 * The first part of every key made without a Scope: a scope named like one would also match keys that
 * belong to no scope at all (`evt:…` of every webhook), so Clear refuses it.
 */
const UNSCOPED_KEY_PREFIXES = new Set([
	'evt',
	'evt-sha256',
	'sha256',
	'sha256-json',
	'sha256-value',
]);

/**
 * Remove Duplicates' Clear Deduplication History: deletes one scope's keys and its watermark, and
 * reports what it removed. Runs once per execution, whatever the number of input items.
 */
export async function executeClearHistory(
	this: IExecuteFunctions,
): Promise<INodeExecutionData[][]> {
	let scope: string;
	let batchSize: number;
	try {
		scope = readClearScope(this.getNodeParameter('clearScope', 0, ''));
		batchSize = readBatchSize(this);
	} catch (error) {
		throw new NodeOperationError(this.getNode(), (error as Error).message);
	}
	const credentials = await readCredentials(this);
	const ref = readTableRef(this);
	try {
		const result = await clearScope(await poolFor(credentials), ref, watermarkRef(ref), {
			scope,
			keyPrefix: scopePrefix(scope),
			batchSize,
		});
		return [
			[
				{
					json: { table: `${ref.schema}.${ref.table}`, scope, ...result },
					pairedItem: { item: 0 },
				},
			],
		];
	} catch (error) {
		return [databaseFailure(this, error, credentials, [0], true)];
	}
}

function readClearScope(value: unknown): string {
	const scope = String(value ?? '').trim();
	if (scope === '') {
		throw new Error(
			'Scope is empty. Clear Deduplication History deletes one scope and never a whole table: give the scope (to delete keys by age, use Purge)',
		);
	}
	if (UNSCOPED_KEY_PREFIXES.has(scope)) {
		throw new Error(
			`Scope "${scope}" is refused: keys made without a Scope start with "${scope}:" too, so clearing it would delete them`,
		);
	}
	return checkScope(scope);
}
