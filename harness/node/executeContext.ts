import type {
	IBinaryData,
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IExecuteFunctions,
	INode,
	INodeExecutionData,
} from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';

export interface ContextOptions {
	/** Node parameters as n8n would resolve them (expressions already evaluated). */
	parameters: IDataObject;
	/** Per-item parameter values, for parameters that are expressions in a real workflow. */
	perItem?: (name: string, itemIndex: number) => unknown;
	/** The credential's fields, as n8n hands them to the node. */
	credentials: object;
	continueOnFail?: boolean;
	/** The node's On Error setting; with continueOnFail and no setting, "Continue (using error output)". */
	onError?: INode['onError'];
	nodeName?: string;
	/** The node's type name inside this package (default idempotencyClaim). */
	nodeType?: string;
	/** The node's id and its workflow's (a polled item's default scope is made of both). */
	nodeId?: string;
	workflowId?: string;
	/** The workflow's time zone (Settings → Timezone); n8n's default when unset. */
	timezone?: string;
}

/** GENERIC_TIMEZONE's default, the zone of a workflow whose settings name none. */
const N8N_DEFAULT_TIMEZONE = 'America/New_York';

/**
 * The part of n8n's execution context these nodes use, built on n8n-workflow's own types: input items,
 * parameters (with dot paths into collections, as n8n resolves them), credentials, binary data and
 * "Continue On Fail". Everything behind it (Postgres) is real; real n8n runs the e2e suite.
 */
export function executeContext(
	items: INodeExecutionData[],
	options: ContextOptions,
): IExecuteFunctions {
	const node: INode = {
		id: options.nodeId ?? 'test-node',
		name: options.nodeName ?? 'Idempotency Claim',
		type: `n8n-nodes-idempotency.${options.nodeType ?? 'idempotencyClaim'}`,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters as INode['parameters'],
		onError: options.onError ?? (options.continueOnFail ? 'continueErrorOutput' : 'stopWorkflow'),
	};
	const context = {
		getInputData: () => items,
		getNode: () => node,
		getWorkflow: () => ({
			id: options.workflowId ?? 'testWorkflow0001',
			name: 'test',
			active: false,
		}),
		getTimezone: () => options.timezone ?? N8N_DEFAULT_TIMEZONE,
		continueOnFail: () =>
			node.onError === 'continueErrorOutput' || node.onError === 'continueRegularOutput',
		getCredentials: async () => options.credentials,
		getNodeParameter: (name: string, itemIndex: number, fallback?: unknown) => {
			const perItem = options.perItem?.(name, itemIndex);
			if (perItem !== undefined) return perItem;
			const value = readPath(options.parameters, name);
			if (value !== undefined) return value;
			if (fallback !== undefined) return fallback;
			throw new Error(`Could not get parameter "${name}"`);
		},
		helpers: {
			getBinaryDataBuffer: async (itemIndex: number, property: string) => {
				const binary = items[itemIndex].binary?.[property] as IBinaryData | undefined;
				if (!binary) throw new Error(`Item ${itemIndex} has no binary property "${property}"`);
				return Buffer.from(binary.data, 'base64');
			},
			// n8n's default binary mode: the bytes inline, as base64.
			prepareBinaryData: async (data: Buffer, fileName?: string, mimeType?: string) => ({
				data: data.toString('base64'),
				mimeType,
				fileName,
			}),
		},
	};
	return context as unknown as IExecuteFunctions;
}

function readPath(root: IDataObject, path: string): unknown {
	let current: unknown = root;
	for (const part of path.split('.')) {
		if (current === null || typeof current !== 'object') return undefined;
		current = (current as IDataObject)[part];
	}
	return current;
}

/** A Webhook node item: parsed body and headers in json, the exact bytes as binary `data` (Raw Body on). */
export function webhookItem(
	rawBody: string,
	headers: Record<string, string> = {},
): INodeExecutionData {
	let body: unknown;
	try {
		body = JSON.parse(rawBody);
	} catch {
		body = {};
	}
	return {
		json: {
			headers: { 'content-type': 'application/json', ...headers },
			params: {},
			query: {},
			body,
		} as IDataObject,
		binary: {
			data: {
				data: Buffer.from(rawBody, 'utf8').toString('base64'),
				mimeType: 'application/json',
				fileName: 'body',
			},
		},
	};
}

/** The credential's Test button: the connection test as n8n calls it, with these settings. */
export function connectionTest(credentials: object) {
	const decrypted = {
		id: '1',
		name: 'pg',
		type: 'idempotencyPostgresApi',
		data: credentials,
	} as unknown as ICredentialsDecrypted;
	const { idempotencyPostgresConnectionTest } = new IdempotencyClaim().methods.credentialTest;
	return idempotencyPostgresConnectionTest.call({} as ICredentialTestFunctions, decrypted);
}
