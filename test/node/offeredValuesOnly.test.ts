/**
 * A workflow file or an expression can set an options parameter to any text. The nodes run only what their
 * description offers: an unknown operation, claim mode, key source or Keep Items Where is refused with an error
 * that names the parameter and the value, and nothing is claimed, completed or released.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { rowsOf } from '../support/claimTableSql';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(1);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

function claim(items: INodeExecutionData[], parameters: IDataObject, continueOnFail = false) {
	return claimNode.execute.call(
		executeContext(items, { parameters, credentials: testCredentials(), continueOnFail }),
	);
}

function runKeyNode(
	operation: string,
	claimed: INodeExecutionData[],
	table: string,
	continueOnFail = false,
) {
	return keyNode.execute.call(
		executeContext(claimed, {
			parameters: { operation, options: { table } },
			perItem: (name, index) => {
				const result = claimed[index].json.idempotency as IDataObject;
				if (name === 'key') return result.key;
				if (name === 'claimId') return result.claimId;
				return undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
			continueOnFail,
		}),
	);
}

const leaseClaim = (table: string) => ({
	keySource: 'auto',
	claimMode: 'lease',
	leaseSeconds: 300,
	options: { table },
});

describe('the Idempotency Key node refuses an operation it does not offer', () => {
	it.each(['delete', 'Release', 'completed', ''])(
		'operation %j: an error naming it, and the claim is still held',
		async (operation) => {
			const table = uniqueTableName('router');
			const [created] = await claim([webhookItem('{"id":"evt_router"}')], leaseClaim(table));
			await expect(runKeyNode(operation, created, table)).rejects.toThrow(
				`Parameter "operation" is ${JSON.stringify(operation)}, which this node does not offer; one of clearHistory, complete, completeWithWrite, discardEvents, listStuck, purge, release`,
			);
			const [failed] = await runKeyNode(operation, created, table, true);
			expect(failed[0].json).toEqual({
				error: 'configuration',
				message: expect.stringContaining(`"operation" is ${JSON.stringify(operation)}`),
			});
			expect((await rowsOf(admin, table)).map(({ key, status }) => ({ key, status }))).toEqual([
				{ key: 'evt:evt_router', status: 'processing' },
			]);
		},
	);
});

describe('the Idempotency Claim node refuses a value it does not offer', () => {
	it.each([
		['claimMode', { claimMode: 'leased' }],
		['keySource', { keySource: 'body' }],
		['keepItemsWhere', { keySource: 'polled', keepItemsWhere: 'newer', dedupeValue: 'x' }],
		['options.payloadFingerprint', { options: { payloadFingerprint: 'json' } }],
	])('%s: an error naming it, and nothing claimed', async (parameter, parameters) => {
		const table = uniqueTableName('router');
		const settings = { claimMode: 'once', ...parameters } as IDataObject;
		settings.options = { table, ...((parameters as IDataObject).options as object) };
		await expect(claim([webhookItem('{"id":"evt_1"}')], settings)).rejects.toThrow(
			`Parameter "${parameter}" is "`,
		);
		const [newItems] = await claim([webhookItem('{"id":"evt_1"}')], settings, true);
		expect(newItems[0].json).toEqual({
			error: 'configuration',
			message: expect.stringContaining(`Parameter "${parameter}"`),
		});
		const tables = await admin.query('SELECT to_regclass($1) AS t', [table]);
		if (tables.rows[0].t !== null) expect(await rowsOf(admin, table)).toEqual([]);
	});
});
