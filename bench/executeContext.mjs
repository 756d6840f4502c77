// The part of n8n's execution context the two nodes use (same contract as test/support/executeContext.ts):
// input items, parameters with dot paths into collections, credentials, binary data, Continue On Fail.

export function executeContext(
	items,
	{ parameters, credentials, nodeName = 'Idempotency Claim', nodeType = 'idempotencyClaim' },
) {
	const node = {
		id: 'bench-node',
		name: nodeName,
		type: `n8n-nodes-idempotency.${nodeType}`,
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	return {
		getInputData: () => items,
		getNode: () => node,
		continueOnFail: () => false,
		getCredentials: async () => credentials,
		getNodeParameter: (name, _itemIndex, fallback) => {
			const value = readPath(parameters, name);
			if (value !== undefined) return value;
			if (fallback !== undefined) return fallback;
			throw new Error(`Could not get parameter "${name}"`);
		},
		helpers: {
			getBinaryDataBuffer: async (itemIndex, property) => {
				const binary = items[itemIndex].binary?.[property];
				if (!binary) throw new Error(`Item ${itemIndex} has no binary property "${property}"`);
				return Buffer.from(binary.data, 'base64');
			},
		},
	};
}

function readPath(root, path) {
	let current = root;
	for (const part of path.split('.')) {
		if (current === null || typeof current !== 'object') return undefined;
		current = current[part];
	}
	return current;
}

/** A Webhook node item with Raw Body on: parsed body and headers in json, the exact bytes as binary `data`. */
export function webhookItem(rawBody, headers = {}) {
	return {
		json: { headers: { 'content-type': 'application/json', ...headers }, params: {}, query: {}, body: JSON.parse(rawBody) },
		binary: { data: { data: Buffer.from(rawBody, 'utf8').toString('base64'), mimeType: 'application/json', fileName: 'body' } },
	};
}

/** A Stripe-like event body with the given id. */
export function eventBody(id) {
	return JSON.stringify({
		id,
		type: 'charge.succeeded',
		created: 1767225600,
		data: { object: { id: `ch_${id.slice(-12)}`, amount: 2000 } },
	});
}
