import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { executeVerify } from './actions/verify.operation';
import { signatureProperties } from './descriptions/signatureProperties';
import { webhookSigningSecretTest } from './methods/credentialTest';
import { optionSubtitle } from '../shared/optionSubtitle';

export class WebhookSignature implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Webhook Signature',
		name: 'webhookSignature',
		icon: { light: 'file:webhookSignature.svg', dark: 'file:webhookSignature.dark.svg' },
		group: ['transform'],
		usableAsTool: true,
		version: 1,
		subtitle: optionSubtitle(signatureProperties, 'scheme'),
		description:
			"Verify a webhook's HMAC signature (Stripe, GitHub, Shopify, Slack, Standard Webhooks, Twilio…) before claiming it",
		defaults: { name: 'Webhook Signature' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [
			{ type: NodeConnectionTypes.Main, displayName: 'Valid' },
			{ type: NodeConnectionTypes.Main, displayName: 'Invalid' },
		],
		credentials: [
			{
				name: 'idempotencyWebhookSigningApi',
				required: true,
				testedBy: 'webhookSigningSecretTest',
			},
		],
		properties: signatureProperties,
	};

	methods = { credentialTest: { webhookSigningSecretTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return executeVerify.call(this);
	}
}
