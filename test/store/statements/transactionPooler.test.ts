import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

import { claimBatch } from '../../../nodes/Idempotency/store/claims/claimBatch';
import type { ClaimTable } from '../../../nodes/Idempotency/store/table/claimTable';
import { purgeKeys } from '../../../nodes/Idempotency/store/claims/purgeKeys';
import { newClaimId } from '../../../nodes/Idempotency/store/record/claimId';
import { finishSteps } from '../../../nodes/Idempotency/store/steps/finishSteps';
import { startSteps } from '../../../nodes/Idempotency/store/steps/startSteps';
import { createStepTableSql, stepTableRef } from '../../../nodes/Idempotency/store/steps/stepTable';
import { openClaimTable } from '../../../nodes/Idempotency/store/table/claimTable';
import { rowsOf } from '../../support/claimTableSql';
import {
	completeKeys,
	releaseKeys,
	openTestClaimTable,
	type TestClaimTable,
} from '../../support/testClaimTables';
import {
	testCredentials,
	testDatabaseUrl,
	testPool,
	uniqueTableName,
} from '../../support/database';
import { TransactionPooler } from '../../../harness/postgres/transactionPooler';
import { WireProxy } from '../../../harness/proxy/wireProxy';

// PgBouncer is a system package (Debian `pgbouncer`, which .ci/run installs). Without it a developer's
// `npm test` skips these tests and says so; in CI its absence fails the run.
const poolerInstalled = TransactionPooler.installed();
if (!poolerInstalled && !process.env.CI) {
	console.warn(
		'pgbouncer is not installed: the transaction-pooler tests are skipped (apt-get install pgbouncer)',
	);
}
const describeWithPooler = poolerInstalled || process.env.CI ? describe : describe.skip;

/** The node names its claim statements idem_<hash> (store/claims/claimSql.ts); an unnamed one carries no name. */
const STATEMENT_NAME = Buffer.from('idem_');

/** What the node's pools send, seen on the wire: chunks in all, and chunks that name a statement. */
const sent = { pooled: { chunks: 0, named: 0 }, direct: { chunks: 0, named: 0 } };
const counting = (side: keyof typeof sent) => () => ({
	fromClient: (chunk: Buffer) => {
		sent[side].chunks++;
		if (chunk.includes(STATEMENT_NAME)) sent[side].named++;
	},
});

let pooler: TransactionPooler;
/** The pooler, and the server itself, behind relays that count what the pools send. */
let toPooler: WireProxy;
let toServer: WireProxy;
let admin: Pool;
beforeAll(async () => {
	if (!poolerInstalled && !process.env.CI) return;
	pooler = await TransactionPooler.start(testDatabaseUrl());
	const server = new URL(testDatabaseUrl());
	toPooler = await WireProxy.start({ host: '127.0.0.1', port: pooler.port }, counting('pooled'));
	toServer = await WireProxy.start(
		{ host: server.hostname, port: Number(server.port || 5432) },
		counting('direct'),
	);
	admin = testPool(2);
}, 30_000);
afterAll(async () => {
	await admin?.end();
	await toPooler?.close();
	await toServer?.close();
	await pooler?.stop();
});

/** The credential's default settings, pointed at the pooler: users do not know what sits behind a host name. */
function throughPooler(): Promise<TestClaimTable> {
	return openTestClaimTable(
		uniqueTableName('pooled'),
		{ createIfMissing: true, privileges: [] },
		testCredentials({ host: '127.0.0.1', port: toPooler.port }),
	);
}

describeWithPooler(
	'through a transaction-mode pooler (PgBouncer 1.18, no prepared-statement tracking)',
	() => {
		it('Create Table, claim once, repeats, batches, lease, complete, release and purge all work', async () => {
			const table = await throughPooler();
			for (let round = 0; round < 20; round++) {
				const keys = Array.from({ length: 50 }, (_, i) => `evt:${round}-${i}`);
				const first = await table.claim(keys);
				const again = await table.claim(keys, { countRepeats: round % 2 === 0 });
				expect(first.every((o) => o.won)).toBe(true);
				expect(again.every((o) => !o.won && o.duplicateKind === 'completed')).toBe(true);
			}
			const [leased] = await table.claim(['evt:lease'], { mode: 'lease' });
			const [busy] = await table.claim(['evt:lease'], { mode: 'lease' });
			expect([leased.won, busy.duplicateKind]).toEqual([true, 'in_progress']);
			expect(await completeKeys(table, [{ key: 'evt:lease', claimId: leased.claimId }])).toEqual([
				true,
			]);
			const [toRelease] = await table.claim(['evt:release'], { mode: 'lease' });
			expect(
				await releaseKeys(table, [{ key: 'evt:release', claimId: toRelease.claimId }]),
			).toEqual([true]);
			await admin.query(
				`UPDATE ${table.ref.qualified} SET first_seen = now() - interval '40 days' WHERE key LIKE 'evt:1%'`,
			);
			const purged = await purgeKeys(table, { olderThanDays: 30, batchSize: 25 });
			expect(purged.deleted).toBe(550);
			expect((await rowsOf(admin, table.ref.qualified)).length).toBe(20 * 50 + 1 - 550);
		});

		it("Start Step and Finish Step: Finish's own commit mode ends with its transaction, nothing stays on a server connection", async () => {
			const pooled = await throughPooler();
			await admin.query(createStepTableSql(stepTableRef(pooled.ref)));
			const table = {
				...pooled,
				...(await openClaimTable(pooled.pool, pooled.ref, {
					createIfMissing: false,
					privileges: [],
					fresh: true,
				})),
			};
			for (let i = 0; i < 20; i++) {
				const request = { key: `evt:step-${i}`, step: 'pay', claimId: newClaimId() };
				await table.claim([request.key], { mode: 'lease', claimId: request.claimId });
				const [first] = await startSteps(table, [request], { serviceHonoursKey: false });
				expect(first.state).toBe('run');
				expect(await finishSteps(table, [{ ...request, result: `{"n":${i}}` }])).toEqual([
					'finished',
				]);
				const [again] = await startSteps(table, [request], { serviceHonoursKey: false });
				expect([again.state, again.result]).toEqual(['done', { n: i }]);
			}
			const settings = await Promise.all(
				Array.from({ length: 8 }, () =>
					table.pool.query<{ mode: string }>(
						"SELECT current_setting('synchronous_commit') AS mode, pg_sleep(0.05)",
					),
				),
			);
			expect(new Set(settings.map(({ rows }) => rows[0].mode))).toEqual(new Set(['on']));
		});

		it('1,000 rounds of 8 concurrent claims of one fresh key: exactly one winner every round', async () => {
			const table = await throughPooler();
			const winnersPerRound: number[] = [];
			for (let round = 0; round < 1000; round++) {
				const key = `evt:race-${round}`;
				const outcomes = await Promise.all(Array.from({ length: 8 }, () => claimOne(table, key)));
				winnersPerRound.push(outcomes.filter((o) => o.won).length);
			}
			expect(winnersPerRound.every((winners) => winners === 1)).toBe(true);
			const rows = await admin.query<{ n: number }>(
				`SELECT count(*)::int AS n FROM ${table.ref.qualified}`,
			);
			expect(rows.rows[0].n).toBe(1000);
			// The pool found the pooler and sends its claims unnamed; a direct pool keeps its prepared statements.
			const before = { ...sent.pooled };
			const after = await Promise.all(
				Array.from({ length: 8 }, (_, i) => claimOne(table, `evt:after-${i}`)),
			);
			expect(after.every((o) => o.won)).toBe(true);
			expect(sent.pooled.chunks).toBeGreaterThan(before.chunks);
			expect(sent.pooled.named).toBe(before.named);
			const direct = await openTestClaimTable(
				table.ref.table,
				{ createIfMissing: false, privileges: [] },
				testCredentials({ host: '127.0.0.1', port: toServer.port }),
			);
			await direct.claim(['evt:direct-1']);
			await Promise.all(Array.from({ length: 8 }, (_, i) => direct.claim([`evt:direct-${i}`])));
			expect(sent.direct.named).toBeGreaterThan(0);
		}, 120_000);
	},
);

function claimOne(table: ClaimTable, key: string) {
	return claimBatch(table, [{ key, fingerprint: null }], {
		mode: 'once',
		leaseSeconds: 60,
		countRepeats: true,
		claimId: randomUUID(),
	}).then(([outcome]) => outcome);
}
