import { closeAllPools } from '../../nodes/Idempotency/transport/poolRegistry';
import { freshClaimTable } from '../support/claimTable';
import { testPool } from '../support/database';

afterAll(closeAllPools);

describe('a killed connection does not fail or double a claim', () => {
	it('claims succeed after every backend of the pool is terminated, and keys stay single', async () => {
		const table = await freshClaimTable();
		const admin = testPool(1);
		await table.claim(['evt:warm-1', 'evt:warm-2']);
		for (let round = 0; round < 5; round++) {
			await admin.query(
				`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'n8n-nodes-idempotency' AND pid <> pg_backend_pid()`,
			);
			const [outcome] = await table.claim([`evt:after-kill-${round}`]);
			expect(outcome.won).toBe(true);
			const [again] = await table.claim([`evt:after-kill-${round}`]);
			expect(again.won).toBe(false);
		}
		await admin.end();
	});

	it('a claim whose backend is terminated mid-statement is retried on a new connection and wins once', async () => {
		const table = await freshClaimTable();
		const blocker = testPool(1);
		const admin = testPool(1);
		const holder = await blocker.connect();
		await holder.query('BEGIN');
		// An uncommitted insert of the same key makes our claim wait inside its statement.
		await holder.query(`INSERT INTO ${table.ref.qualified} (key) VALUES ('evt:blocked')`);
		const pending = table.claim(['evt:blocked']);
		let killed = 0;
		for (let attempt = 0; attempt < 100 && killed === 0; attempt++) {
			await new Promise((resolve) => setTimeout(resolve, 20));
			const result = await admin.query(
				`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				 WHERE application_name = 'n8n-nodes-idempotency' AND wait_event_type = 'Lock'`,
			);
			killed = result.rowCount ?? 0;
		}
		expect(killed).toBe(1);
		await holder.query('ROLLBACK');
		holder.release();
		const [outcome] = await pending;
		expect(outcome.won).toBe(true);
		const rows = await admin.query(`SELECT key FROM ${table.ref.qualified}`);
		expect(rows.rows).toEqual([{ key: 'evt:blocked' }]);
		await blocker.end();
		await admin.end();
	});
});
