import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { failedItem } from './actions/failures/databaseFailure';
import { routeKeyOperation } from './actions/keyRouter';
import { clearHistoryProperties } from './descriptions/clearHistoryProperties';
import { inboxBulkProperties } from './descriptions/inboxBulkProperties';
import { inboxProperties } from './descriptions/inboxProperties';
import { keyOperationProperty } from './descriptions/keyOperationProperty';
import { purgeProperties } from './descriptions/purgeProperties';
import { settleProperties } from './descriptions/settleProperties';
import { stuckClaimsProperties } from './descriptions/stuckClaimsProperties';
import { tableOptions } from './descriptions/tableOptions';
import { writeProperties } from './descriptions/writeProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

export class IdempotencyKey implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		icon: { light: 'file:idempotencyKey.svg', dark: 'file:idempotencyKey.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle([keyOperationProperty], 'operation'),
		description:
			'Complete or release a claimed key, list stuck claims, purge old keys, or clear one scope',
		defaults: { name: 'Idempotency Key' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: [
			keyOperationProperty,
			...settleProperties,
			...writeProperties,
			...purgeProperties,
			...stuckClaimsProperties,
			...inboxProperties,
			...inboxBulkProperties,
			...clearHistoryProperties,
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add option',
				default: {},
				options: tableOptions,
			},
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeKeyOperation.call(this),
			(error) => [
				this.getInputData().map((_, index) => failedItem(error.message, 'configuration', index)),
			],
		);
	}
}
