/**
 * One pool per credential for the whole process (transport/poolRegistry), as the server sees it: however
 * many executions run, with one item or many, a credential never holds more than its Max Connections, and
 * its connections outlive each execution (reused, not opened per execution or per item). Each test's
 * credential logs in as a role of its own, so the server's count is this test's alone.
 */
import type { INodeExecutionData } from 'n8n-workflow';
import type { Pool } from 'pg';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { createTestRole, testPool, uniqueTableName, type TestRole } from '../support/database';

const MAX_CONNECTIONS = 2;

let admin: Pool;
const roles: TestRole[] = [];
beforeAll(() => {
	admin = testPool(1);
});
afterAll(async () => {
	for (const role of roles) await role.drop();
	await admin.end();
});

async function newRole(): Promise<TestRole> {
	const role = await createTestRole(admin, 'pool_role');
	roles.push(role);
	return role;
}

/** The connections the server has open for this role, whatever their state. */
async function connectionsOf(role: TestRole): Promise<number> {
	const { rows } = await admin.query<{ n: number }>(
		'SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1',
		[role.name],
	);
	return rows[0].n;
}

const node = new IdempotencyClaim();

function claim(role: TestRole, table: string, ids: string[]): Promise<INodeExecutionData[][]> {
	const context = executeContext(
		ids.map((id) => webhookItem(JSON.stringify({ id }))),
		{
			parameters: { keySource: 'auto', claimMode: 'once', options: { table } },
			credentials: role.credentials({ maxConnections: MAX_CONNECTIONS }),
		},
	);
	return node.execute.call(context);
}

describe('one pool per credential', () => {
	it('50 executions at once and 20 more one after another hold at most Max Connections, reused between executions', async () => {
		const role = await newRole();
		const table = uniqueTableName('pooled');
		await claim(role, table, ['evt_warm']);
		const concurrent = await Promise.all(
			Array.from({ length: 50 }, (_, i) => claim(role, table, [`evt_c${i}`, `evt_d${i}`])),
		);
		expect(concurrent.every(([fresh]) => fresh.length === 2)).toBe(true);
		const afterBurst = await connectionsOf(role);
		expect(afterBurst).toBeGreaterThanOrEqual(1);
		expect(afterBurst).toBeLessThanOrEqual(MAX_CONNECTIONS);
		for (let i = 0; i < 20; i++) await claim(role, table, [`evt_s${i}`]);
		// The same connections served them: none was closed after its execution, none opened beside them.
		expect(await connectionsOf(role)).toBe(afterBurst);
	});
});
