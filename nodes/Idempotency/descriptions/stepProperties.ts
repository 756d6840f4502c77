import type { INodeProperties } from 'n8n-workflow';

import { tableOptions } from './tableOptions';

/** The Idempotency Step node's operations, as the editor offers them; the router runs only these. */
export type StepOperation = 'start' | 'finish' | 'forget';

export const DEFAULT_MAX_RESULT_KIB = 64;
export const MAX_RESULT_KIB_LIMIT = 1024;

const START_AND_FINISH = { show: { operation: ['start', 'finish'] } };

export const stepOperationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Start Step',
			value: 'start',
			action: 'Start a step',
			description:
				'Before a side effect outside Postgres (an HTTP request, an email, a payment): Run the first time, Done once it finished in an earlier run, Uncertain when an earlier run started it and died',
		},
		{
			name: 'Finish Step',
			value: 'finish',
			action: 'Finish a step',
			description:
				'After the step succeeded: record its result, which later runs of the event get on Done',
		},
		{
			name: 'Forget Step',
			value: 'forget',
			action: 'Forget a step',
			description:
				'For an operator who checked an Uncertain step by hand: clear its mark so the next run runs it, or record the result found',
		},
	],
	default: 'start',
};

export const stepProperties: INodeProperties[] = [
	stepOperationProperty,
	{
		displayName: 'Step Name',
		name: 'stepName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'charge card',
		description:
			'A short name for the step, unique within the workflow and the same on every run (not built from data): letters, digits, spaces and _ - . :, up to 64 characters.',
	},
	{
		displayName: 'Key',
		name: 'key',
		type: 'string',
		default: '={{ $json.idempotency.key }}',
		description:
			"The event's key, from the Idempotency Claim node's item (map it by paired item after nodes that replace the item)",
	},
	{
		displayName: 'Claim ID',
		name: 'claimId',
		type: 'string',
		default: '={{ $json.idempotency.claimId }}',
		description:
			"The idempotency.claimId the claim node gave this execution: only the claim's holder starts or finishes a step",
		displayOptions: START_AND_FINISH,
	},
	{
		displayName: 'Result',
		name: 'resultSource',
		type: 'options',
		options: [
			{
				name: 'Whole Item',
				value: 'item',
				description: "The item's JSON without its idempotency field",
			},
			{ name: 'Custom JSON', value: 'custom', description: 'The JSON value below' },
		],
		default: 'item',
		description: 'What to record as the step’s result; later runs of the event get it on Done',
		displayOptions: { show: { operation: ['finish'] } },
	},
	{
		displayName: 'Record Result Instead',
		name: 'recordResult',
		type: 'boolean',
		default: false,
		description:
			"Whether to record the result found by hand (the step did happen) on the step's mark, so the next run takes Done, instead of clearing the mark so it runs the step again. With no mark for the Key and Step Name, nothing is recorded (not_found).",
		displayOptions: { show: { operation: ['forget'] } },
	},
	{
		displayName: 'Result JSON',
		name: 'resultJson',
		type: 'json',
		default: '{}',
		displayOptions: { show: { operation: ['finish'], resultSource: ['custom'] } },
	},
	{
		displayName: 'Result JSON',
		name: 'resultJson',
		type: 'json',
		default: '{}',
		displayOptions: { show: { operation: ['forget'], recordResult: [true] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Service Honours the Key',
				name: 'serviceHonoursKey',
				type: 'boolean',
				default: false,
				description:
					'Whether the service deduplicates by the step key (idempotency.step.key sent as its Idempotency-Key header): then a step an earlier run started and never finished goes to Run again, not Uncertain',
				displayOptions: { show: { '/operation': ['start'] } },
			},
			{
				displayName: 'Max Result Size (KiB)',
				name: 'maxResultKib',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MAX_RESULT_KIB_LIMIT },
				default: DEFAULT_MAX_RESULT_KIB,
				description:
					'A larger result fails its item with its size, and the step stays started, not finished: record only what later runs need',
				displayOptions: { show: { '/operation': ['finish'] } },
			},
			{
				displayName: 'Create Table If Missing',
				name: 'createTable',
				type: 'boolean',
				default: true,
				description:
					'Whether to create the step table (the table name followed by _steps) when it does not exist',
				displayOptions: { show: { '/operation': ['start'] } },
			},
			...tableOptions,
		],
	},
];
