/**
 * Both nodes, with the options users set, on a claim table an operator split by hash of the key (what
 * README's "When one table is not enough" describes). The claim once statement used to read a system
 * column that a partitioned table cannot return, and failed there.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../nodes/Idempotency/IdempotencyKey.node';
import { HASH_PARTITIONED_DDL, LAYOUT_COLUMNS } from '../support/claimTableSql';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { testCredentials, testPool, uniqueTableName } from '../support/database';

const admin = testPool(2);
afterAll(() => admin.end());

const claimNode = new IdempotencyClaim();
const keyNode = new IdempotencyKey();

function claim(ids: string[], table: string, parameters: IDataObject = {}, body = '') {
	const items = ids.map((id) => webhookItem(`{"id":"${id}"${body}}`));
	return claimNode.execute.call(
		executeContext(items, {
			parameters: {
				keySource: 'auto',
				claimMode: 'once',
				...parameters,
				options: { table, ...(parameters.options as object) },
			},
			credentials: testCredentials(),
		}),
	);
}

function keyOperation(items: INodeExecutionData[], parameters: IDataObject) {
	return keyNode.execute.call(
		executeContext(items, {
			parameters,
			perItem: (name, index) => {
				const result = items[index].json.idempotency as IDataObject | undefined;
				if (name === 'key') return result?.key;
				if (name === 'claimId') return result?.claimId;
				return undefined;
			},
			credentials: testCredentials(),
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
		}),
	);
}

const counts = (outputs: INodeExecutionData[][]) => outputs.map((output) => output.length);

it.each(['compact', 'original'] as const)(
	'every operation of both nodes works on a hash-partitioned table (%s layout)',
	async (layout) => {
		const table = uniqueTableName('parted');
		for (const statement of HASH_PARTITIONED_DDL(table, LAYOUT_COLUMNS[layout]))
			await admin.query(statement);

		expect(counts(await claim(['evt_1'], table))).toEqual([1, 0]);
		expect(counts(await claim(['evt_1'], table))).toEqual([0, 1]);
		expect(counts(await claim(['evt_1', 'evt_2', 'evt_3', 'evt_2'], table))).toEqual([2, 2]);
		const readOnly = { options: { countRepeats: false } };
		expect(counts(await claim(['evt_1'], table, readOnly))).toEqual([0, 1]);
		expect(counts(await claim(['evt_1', 'evt_4'], table, readOnly))).toEqual([1, 1]);

		const fingerprinted = { options: { payloadFingerprint: 'canonicalJson' } };
		expect(counts(await claim(['evt_F'], table, fingerprinted, ',"amount":1'))).toEqual([1, 0, 0]);
		expect(counts(await claim(['evt_F'], table, fingerprinted, ',"amount":2'))).toEqual([0, 0, 1]);

		const leased = { claimMode: 'lease', leaseSeconds: 300 };
		const [toComplete] = await claim(['evt_C', 'evt_R'], table, leased);
		expect(counts(await claim(['evt_C'], table, leased))).toEqual([0, 1]);
		const [[completed]] = await keyOperation([toComplete[0]], {
			operation: 'complete',
			options: { table },
		});
		const [[released]] = await keyOperation([toComplete[1]], {
			operation: 'release',
			options: { table },
		});
		expect(completed.json.idempotency).toMatchObject({ completed: true });
		expect(released.json.idempotency).toMatchObject({ released: true });

		await admin.query(
			`UPDATE ${table} SET first_seen = now() - interval '40 days' WHERE key IN ('evt:evt_2', 'evt:evt_3')`,
		);
		const [[purged]] = await keyOperation([{ json: {} }], {
			operation: 'purge',
			olderThanDays: 30,
			batchSize: 1,
			options: { table },
		});
		expect(purged.json).toMatchObject({ deleted: 2, batches: 3 });

		const [stuck] = await claim(['evt_S'], table, { claimMode: 'lease', leaseSeconds: 1 });
		expect(stuck).toHaveLength(1);
		await admin.query(
			`UPDATE ${table} SET first_seen = now() - interval '2 hours', lease_until = now() - interval '1 hour' WHERE key = 'evt:evt_S'`,
		);
		const [report] = await keyOperation([{ json: {} }], {
			operation: 'listStuck',
			includeSummary: true,
			options: { table },
		});
		expect(report.map((item) => item.json.kind)).toEqual(['summary', 'stuck_claim']);
		expect(report[0].json).toMatchObject({
			// evt_1, evt_4, evt_F, evt_C completed; evt_R released, evt_2 and evt_3 purged.
			totalKeys: 5,
			keysByStatus: { completed: 4, processing: 1 },
			stuckClaims: 1,
		});
		expect(report[1].json).toMatchObject({ key: 'evt:evt_S' });
	},
);
