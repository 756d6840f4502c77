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
import { purgeProperties } from './descriptions/purgeProperties';
import { settleProperties } from './descriptions/settleProperties';
import { stuckClaimsProperties } from './descriptions/stuckClaimsProperties';
import { tableOptions } from './descriptions/tableOptions';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';

export class IdempotencyKey implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		icon: { light: 'file:idempotencyKey.svg', dark: 'file:idempotencyKey.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: '={{ $parameter.operation }}',
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
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Clear Deduplication History',
						value: 'clearHistory',
						action: 'Clear deduplication history',
						description:
							"Delete one scope's keys and its watermark, as Remove Duplicates' Clear Deduplication History does",
					},
					{
						name: 'Complete',
						value: 'complete',
						action: 'Complete a claimed key',
						description:
							'Mark the key done after the business step succeeded; later deliveries are completed duplicates',
					},
					{
						name: 'List Stuck Claims',
						value: 'listStuck',
						action: 'List stuck claims',
						description:
							'List claims left processing with an expired lease (their execution died), optionally with a summary of the table',
					},
					{
						name: 'Purge',
						value: 'purge',
						action: 'Purge old keys',
						description: 'Delete keys older than the providers can resend, in batches',
					},
					{
						name: 'Release',
						value: 'release',
						action: 'Release a claimed key',
						description:
							"Delete the key after the business step failed, so the provider's next retry runs",
					},
				],
				default: 'complete',
			},
			...settleProperties,
			...purgeProperties,
			...stuckClaimsProperties,
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
