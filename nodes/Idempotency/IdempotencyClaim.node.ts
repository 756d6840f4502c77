import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { allUnclaimed } from './actions/claim.operation';
import { routeClaim } from './actions/claimRouter';
import { claimProperties } from './descriptions/claimProperties';
import { idempotencyPostgresConnectionTest } from './methods/credentialTest';
import { continuingSafely } from '../shared/continuingSafely';
import { optionSubtitle } from '../shared/optionSubtitle';

// A third output appears only when a payload fingerprint is stored and compared.
const TWO_OUTPUTS =
	"[{ type: 'main', displayName: 'New' }, { type: 'main', displayName: 'Duplicate' }]";
const THREE_OUTPUTS =
	"[{ type: 'main', displayName: 'New' }, { type: 'main', displayName: 'Duplicate' }, { type: 'main', displayName: 'Mismatch' }]";
const OUTPUTS_EXPRESSION: `={{${string}}}` = `={{ ($parameter.options?.payloadFingerprint ?? 'off') === 'off' ? ${TWO_OUTPUTS} : ${THREE_OUTPUTS} }}`;

export class IdempotencyClaim implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Claim',
		name: 'idempotencyClaim',
		icon: { light: 'file:idempotencyClaim.svg', dark: 'file:idempotencyClaim.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle(claimProperties, 'claimMode'),
		description: 'Claim each event once in Postgres and route new and duplicate deliveries',
		defaults: { name: 'Idempotency Claim' },
		inputs: [NodeConnectionTypes.Main],
		outputs: OUTPUTS_EXPRESSION,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: claimProperties,
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await continuingSafely(
			this,
			() => routeClaim.call(this),
			(error) => allUnclaimed(this, error),
		);
	}
}
